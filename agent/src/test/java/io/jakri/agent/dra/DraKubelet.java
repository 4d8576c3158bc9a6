package io.jakri.agent.dra;

import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
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
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Predicate;

/**
 * The kubelet's side of DRA in Python (Debian's {@code python3-grpcio}), its gRPC code generated at
 * test time by Debian's {@code protoc} and {@code grpc_python_plugin} from the kubelet's unchanged
 * DRA v1, v1beta1 and plugin-registration v1 protos (copied under distinct file names: their
 * upstream paths hold a directory {@code k8s.io} Python cannot import from); see {@code
 * src/test/python/dra_kubelet.py}. Under {@code CI=true} missing tools fail the test; elsewhere it
 * is skipped (as {@code AkriPeer} does).
 */
final class DraKubelet implements AutoCloseable {

  static final ObjectMapper JSON = new ObjectMapper();
  static final Path PROTOS =
      Path.of("protocol", "src", "main", "proto", "k8s.io", "kubelet", "pkg", "apis");
  static final Path SCRIPT = Path.of("src", "test", "python", "dra_kubelet.py");
  static final Path GENERATED = Path.of("target", "dra-kubelet").toAbsolutePath();

  private final Process process;
  private final OutputStream stdin;
  private final List<JsonNode> events = new CopyOnWriteArrayList<>();
  private final AtomicInteger ids = new AtomicInteger();

  private DraKubelet(Process process) {
    this.process = process;
    this.stdin = process.getOutputStream();
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
                    System.err.println("dra kubelet: " + line);
                  }
                }
              } catch (IOException e) {
                // process gone
              }
            },
            "dra-kubelet");
    reader.setDaemon(true);
    reader.start();
  }

  /** Generates the Python gRPC code into target/dra-kubelet (once per run). */
  static synchronized Path generate() throws Exception {
    Path marker = GENERATED.resolve("pluginregistration_pb2_grpc.py");
    if (Files.exists(marker)) {
      return GENERATED;
    }
    Path protos = GENERATED.resolve("proto");
    Files.createDirectories(protos);
    Files.copy(
        PROTOS.resolve("dra/v1/api.proto"),
        protos.resolve("dra_v1.proto"),
        StandardCopyOption.REPLACE_EXISTING);
    Files.copy(
        PROTOS.resolve("dra/v1beta1/api.proto"),
        protos.resolve("dra_v1beta1.proto"),
        StandardCopyOption.REPLACE_EXISTING);
    Files.copy(
        PROTOS.resolve("pluginregistration/v1/api.proto"),
        protos.resolve("pluginregistration.proto"),
        StandardCopyOption.REPLACE_EXISTING);
    PythonGrpc.generate(
        "DRA kubelet stand-in",
        protos,
        GENERATED,
        "dra_v1.proto",
        "dra_v1beta1.proto",
        "pluginregistration.proto");
    Files.copy(SCRIPT, GENERATED.resolve("dra_kubelet.py"), StandardCopyOption.REPLACE_EXISTING);
    return GENERATED;
  }

  /** Starts the stand-in watching {@code registryDir}. */
  static DraKubelet start(Path registryDir) throws Exception {
    Path code = generate();
    List<String> cmd = new ArrayList<>();
    cmd.add(PythonGrpc.python());
    cmd.add("-u");
    cmd.add(code.resolve("dra_kubelet.py").toString());
    cmd.add("--registry-dir");
    cmd.add(registryDir.toString());
    ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(ProcessBuilder.Redirect.INHERIT);
    pb.environment().put("PYTHONPATH", code.toString());
    DraKubelet k = new DraKubelet(pb.start());
    k.awaitEvent("watching", e -> true);
    return k;
  }

  List<JsonNode> events(String type) {
    return events.stream().filter(e -> type.equals(e.path("event").asText())).toList();
  }

  JsonNode awaitEvent(String type, Predicate<JsonNode> match) {
    await().atMost(Duration.ofSeconds(30)).until(() -> events(type).stream().anyMatch(match));
    return events(type).stream().filter(match).findFirst().orElseThrow();
  }

  JsonNode awaitRegistered() {
    return awaitEvent("registered", e -> true);
  }

  /** Calls NodePrepareResources for the claims (each {@code namespace, uid, name}). */
  JsonNode prepare(String version, String[]... claims) throws IOException {
    return call("prepare", version, claims);
  }

  JsonNode unprepare(String version, String[]... claims) throws IOException {
    return call("unprepare", version, claims);
  }

  private JsonNode call(String op, String version, String[]... claims) throws IOException {
    int id = ids.incrementAndGet();
    ObjectNode command = JSON.createObjectNode();
    command.put("op", op);
    command.put("id", id);
    if (version != null) {
      command.put("version", version);
    }
    ArrayNode list = command.putArray("claims");
    for (String[] c : claims) {
      list.addObject().put("namespace", c[0]).put("uid", c[1]).put("name", c[2]);
    }
    stdin.write((JSON.writeValueAsString(command) + "\n").getBytes(StandardCharsets.UTF_8));
    stdin.flush();
    await()
        .atMost(Duration.ofSeconds(30))
        .until(
            () ->
                events.stream()
                    .anyMatch(
                        e ->
                            e.path("id").asInt() == id
                                && (e.path("event").asText().equals(op + "d")
                                    || e.path("event").asText().equals("call-failed"))));
    return events.stream().filter(e -> e.path("id").asInt() == id).findFirst().orElseThrow();
  }

  @Override
  public void close() throws Exception {
    process.destroy();
    if (!process.waitFor(5, TimeUnit.SECONDS)) {
      process.destroyForcibly();
      process.waitFor(5, TimeUnit.SECONDS);
    }
  }
}
