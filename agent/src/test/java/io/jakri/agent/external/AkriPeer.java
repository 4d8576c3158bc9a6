package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.PythonGrpc;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Predicate;

/**
 * A discovery handler in Python (Debian's {@code python3-grpcio}), its gRPC code generated at test
 * time by Debian's {@code protoc} and {@code grpc_python_plugin} from Akri's unchanged {@code
 * discovery.proto}; see {@code src/test/python/akri_peer.py}. Under {@code CI=true} missing tools
 * fail the test; elsewhere it is skipped.
 */
final class AkriPeer implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Path PROTO = Path.of("protocol", "src", "main", "proto", "discovery.proto");
  static final Path SCRIPT = Path.of("src", "test", "python", "akri_peer.py");
  static final Path GENERATED = Path.of("target", "akri-peer").toAbsolutePath();

  private final Process process;
  private final OutputStream stdin;
  private final List<JsonNode> events = new CopyOnWriteArrayList<>();
  final String name;

  private AkriPeer(Process process, String name) {
    this.process = process;
    this.stdin = process.getOutputStream();
    this.name = name;
    Thread reader =
        new Thread(
            () -> {
              try (BufferedReader r =
                  new BufferedReader(
                      new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                  try {
                    events.add(JSON.readTree(line));
                  } catch (IOException e) {
                    System.err.println("akri peer: " + line);
                  }
                }
              } catch (IOException e) {
                // process gone
              }
            },
            "akri-peer-" + name);
    reader.setDaemon(true);
    reader.start();
  }

  /** Generates the Python gRPC code from Akri's .proto into target/akri-peer (once per run). */
  static synchronized Path generate() throws Exception {
    Path marker = GENERATED.resolve("discovery_pb2_grpc.py");
    if (Files.exists(marker)) {
      // the script may have changed since target/ was filled
      Files.copy(SCRIPT, GENERATED.resolve("akri_peer.py"), StandardCopyOption.REPLACE_EXISTING);
      return GENERATED;
    }
    Files.createDirectories(GENERATED);
    PythonGrpc.generate(
        "Python peer", PROTO.getParent(), GENERATED, PROTO.getFileName().toString());
    Files.copy(SCRIPT, GENERATED.resolve("akri_peer.py"), StandardCopyOption.REPLACE_EXISTING);
    return GENERATED;
  }

  /** Starts a handler on a Unix socket {@code <dir>/<socketName>}. */
  static AkriPeer uds(
      Path dir, String name, String socketName, boolean shared, Duration registerInterval)
      throws Exception {
    return start(
        dir, name, shared, registerInterval, "--socket", dir.resolve(socketName).toString());
  }

  /**
   * Starts a handler on a Unix socket whose gRPC server permits keepalive PINGs every second
   * (grpcio's default allows one per 5 minutes while it sends nothing).
   */
  static AkriPeer udsPermittingPings(
      Path dir, String name, String socketName, Duration registerInterval) throws Exception {
    return start(
        dir,
        name,
        false,
        registerInterval,
        "--socket",
        dir.resolve(socketName).toString(),
        "--permit-pings");
  }

  /** Starts a handler on a free TCP port (NETWORK endpoint). */
  static AkriPeer network(Path dir, String name, boolean shared, Duration registerInterval)
      throws Exception {
    return start(dir, name, shared, registerInterval, "--port", "0");
  }

  private static AkriPeer start(
      Path dir, String name, boolean shared, Duration interval, String... endpoint)
      throws Exception {
    Path code = generate();
    List<String> cmd = new ArrayList<>();
    cmd.add(PythonGrpc.python());
    cmd.add("-u");
    cmd.add(code.resolve("akri_peer.py").toString());
    cmd.add("--dir");
    cmd.add(dir.toString());
    cmd.add("--name");
    cmd.add(name);
    cmd.add("--register-interval");
    cmd.add(String.valueOf(interval.toMillis() / 1000.0));
    if (shared) {
      cmd.add("--shared");
    }
    cmd.addAll(List.of(endpoint));
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().put("PYTHONPATH", code.toString());
    pb.environment().put("DISCOVERY_HANDLERS_DIRECTORY", dir.toString());
    return new AkriPeer(pb.start(), name);
  }

  /** Sends a command line (see akri_peer.py). */
  void send(String json) throws IOException {
    stdin.write((json + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
  }

  /** Sends a full snapshot of devices with ids and properties {@code ID=<id>}. */
  void devices(String... ids) throws IOException {
    StringBuilder b = new StringBuilder("{\"devices\": [");
    for (int i = 0; i < ids.length; i++) {
      b.append(i == 0 ? "" : ",")
          .append("{\"id\": \"")
          .append(ids[i])
          .append("\", \"properties\": {\"ID\": \"")
          .append(ids[i])
          .append("\"}}");
    }
    send(b.append("]}").toString());
  }

  List<JsonNode> events(String type) {
    return events.stream().filter(e -> type.equals(e.path("event").asText())).toList();
  }

  JsonNode awaitEvent(String type, Predicate<JsonNode> match) {
    await().atMost(Duration.ofSeconds(20)).until(() -> events(type).stream().anyMatch(match));
    return events(type).stream().filter(match).findFirst().orElseThrow();
  }

  JsonNode awaitRegistered() {
    return awaitEvent("registered", e -> true);
  }

  Optional<JsonNode> last(String type) {
    List<JsonNode> list = events(type);
    return list.isEmpty() ? Optional.empty() : Optional.of(list.get(list.size() - 1));
  }

  /** Freezes the process (SIGSTOP): its sockets stay open, nothing in it answers. */
  void freeze() throws Exception {
    signal("STOP");
  }

  /** Lets a frozen process run again (SIGCONT). */
  void thaw() throws Exception {
    signal("CONT");
  }

  private void signal(String name) throws Exception {
    Process kill =
        new ProcessBuilder("kill", "-" + name, Long.toString(process.pid()))
            .redirectErrorStream(true)
            .start();
    String out = new String(kill.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    assertThat(kill.waitFor()).as("kill -%s: %s", name, out).isZero();
  }

  /** Kills the process at once (a handler crash). */
  void kill() throws InterruptedException {
    process.destroyForcibly();
    assertThat(process.waitFor(10, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
  }

  @Override
  public void close() throws InterruptedException {
    kill();
  }
}
