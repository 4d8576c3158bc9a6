package io.jakri.handler.onvif;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * A network for real WS-Discovery/ONVIF peers: a network namespace {@code onvif-<id>} joined to the
 * test's namespace by a veth pair, IPv4 multicast enabled on both ends.
 *
 * <pre>
 *   test JVM (root netns)               netns onvif-&lt;id&gt;
 *   onv&lt;id&gt;a 10.214.N.1/29  &lt;--veth--&gt;  onv&lt;id&gt;b 10.214.N.2/29   camera stand-ins, wsdd,
 *                                                                   onvif-util, npm onvif
 * </pre>
 *
 * The handler probes on {@code onv<id>a} only ({@code interfaces: [...]} in its details), so
 * nothing is multicast onto the host's real networks. Inside the namespace 224.0.0.0/4 is routed to
 * the veth, so peers there can multicast too (and, with multicast loop-back, hear each other).
 * Needs root and iproute2; {@link #close()} removes everything and is safe after a partial start.
 * Threading: any thread; one network per test class. Public (and shipped in this module's test-jar)
 * so the agent-level ITs in {@code it/} use the same peers.
 */
public final class OnvifNetwork implements AutoCloseable {

  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

  /** The camera stand-in script, a resource of this module's tests (and of its test-jar). */
  static final String STANDIN_RESOURCE = "/onvif-camera-standin.py";

  static final Path NODE_DIR = Path.of("src/test/node").toAbsolutePath();

  private final String id =
      HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
  private final int subnet = ThreadLocalRandom.current().nextInt(1, 31) * 8;
  public final String namespace = "onvif-" + id;
  public final String hostInterface = "onv" + id + "a";
  public final String peerInterface = "onv" + id + "b";
  public final String hostAddress = "10.214." + subnet + ".1";
  public final String peerAddress = "10.214." + subnet + ".2";

  /** A second address inside the namespace, for a host other than the cameras (a flooder). */
  public final String otherPeerAddress = "10.214." + subnet + ".3";

  private final List<Process> processes = new CopyOnWriteArrayList<>();
  private Path dir;
  private boolean client;
  private boolean clientCreated;
  private boolean namespaceCreated;
  private boolean linkCreated;

  private OnvifNetwork() {}

  /**
   * Sets the network up, or aborts the test class (skip) when it cannot, except under {@code
   * CI=true}, where a missing peer fails.
   */
  public static OnvifNetwork startOrSkip(String... tools) {
    return startOrSkip(false, tools);
  }

  /**
   * As {@link #startOrSkip(String...)}; with {@code clientNamespace} the test's end of the veth
   * goes into a second namespace {@code onvif-<id>c} instead of the test's own, for clients that
   * must run as separate processes and turn multicast loop-back off (onvif-util does).
   */
  public static OnvifNetwork startOrSkip(boolean clientNamespace, String... tools) {
    OnvifNetwork network = new OnvifNetwork();
    network.client = clientNamespace;
    try {
      for (String tool : tools) {
        if (!onPath(tool)) {
          throw new IOException(tool + " is not installed");
        }
      }
      network.setUp();
      return network;
    } catch (IOException | RuntimeException e) {
      network.close();
      String message = "no network namespace peer, ONVIF interop not tested: " + e.getMessage();
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
      throw new AssertionError("unreachable");
    }
  }

  private void setUp() throws IOException {
    if (!onPath("ip")) {
      throw new IOException("ip (iproute2) is not installed");
    }
    dir = Files.createTempDirectory("jakri-onvif-" + id + "-");
    run("ip", "netns", "add", namespace);
    namespaceCreated = true;
    run("ip", "link", "add", hostInterface, "type", "veth", "peer", "name", peerInterface);
    linkCreated = true;
    run("ip", "link", "set", peerInterface, "netns", namespace);
    if (client) {
      run("ip", "netns", "add", clientNamespace());
      clientCreated = true;
      run("ip", "link", "set", hostInterface, "netns", clientNamespace());
      inClient("ip", "link", "set", "lo", "up");
      inClient("ip", "addr", "add", hostAddress + "/29", "dev", hostInterface);
      inClient("ip", "link", "set", hostInterface, "multicast", "on", "up");
      inClient("ip", "route", "add", "224.0.0.0/4", "dev", hostInterface);
    } else {
      run("ip", "addr", "add", hostAddress + "/29", "dev", hostInterface);
      run("ip", "link", "set", hostInterface, "multicast", "on", "up");
    }
    inNamespace("ip", "link", "set", "lo", "up");
    inNamespace("ip", "addr", "add", peerAddress + "/29", "dev", peerInterface);
    inNamespace("ip", "addr", "add", otherPeerAddress + "/29", "dev", peerInterface);
    inNamespace("ip", "link", "set", peerInterface, "multicast", "on", "up");
    inNamespace("ip", "route", "add", "224.0.0.0/4", "dev", peerInterface);
  }

  /** A process running inside the namespace, its output in a log file. */
  public final class Peer implements AutoCloseable {
    final Process process;
    final Path log;
    final long startedNanos;

    Peer(Process process, Path log, long startedNanos) {
      this.process = process;
      this.log = log;
      this.startedNanos = startedNanos;
    }

    public String output() {
      return read(log);
    }

    /** Waits until the output matches {@code pattern}; returns the first group. */
    String await(Pattern pattern, Duration atMost) throws IOException {
      try {
        org.awaitility.Awaitility.await("output of " + log.getFileName())
            .atMost(atMost)
            .pollInterval(Duration.ofMillis(10))
            .until(() -> pattern.matcher(output()).find() || !process.isAlive());
      } catch (ConditionTimeoutException e) {
        throw new IOException("no " + pattern + " in: " + output());
      }
      Matcher m = pattern.matcher(output());
      if (!m.find()) {
        throw new IOException("peer exited without " + pattern + ": " + output());
      }
      return m.groupCount() > 0 ? m.group(1) : m.group();
    }

    /** Waits for the process to end; its exit code. */
    int waitFor(Duration atMost) throws InterruptedException, IOException {
      if (!process.waitFor(atMost.toMillis(), TimeUnit.MILLISECONDS)) {
        stop(process);
        throw new IOException("peer did not finish: " + output());
      }
      return process.exitValue();
    }

    @Override
    public void close() {
      stop(process);
    }
  }

  /** A camera stand-in with its HTTP port. */
  public record Camera(Peer peer, String uuid, int port) implements AutoCloseable {
    public String serviceUrl(String address) {
      return "http://" + address + ":" + port + "/onvif/device_service";
    }

    @Override
    public void close() {
      peer.close();
    }
  }

  /**
   * Starts a camera stand-in (see src/test/resources/onvif-camera-standin.py for the options) and
   * waits until it listens.
   */
  public Camera camera(String uuid, String... options) throws IOException {
    List<String> command =
        new ArrayList<>(
            List.of(python(), standin().toString(), "--bind-ip", peerAddress, "--uuid", uuid));
    command.addAll(List.of(options));
    Peer peer = spawn(command.toArray(String[]::new));
    int port =
        Integer.parseInt(peer.await(Pattern.compile("READY (\\d+)"), Duration.ofSeconds(20)));
    return new Camera(peer, uuid, port);
  }

  /** The stand-in script, copied from the class path into this network's temp dir once. */
  private synchronized Path standin() throws IOException {
    Path script = dir.resolve("onvif-camera-standin.py");
    if (!Files.exists(script)) {
      try (var in = OnvifNetwork.class.getResourceAsStream(STANDIN_RESOURCE)) {
        if (in == null) {
          throw new IOException(STANDIN_RESOURCE + " is not on the class path");
        }
        Files.copy(in, script);
      }
    }
    return script;
  }

  String clientNamespace() {
    return namespace + "c";
  }

  /** Runs a command in the client namespace (see {@link #startOrSkip(boolean, String...)}). */
  Peer spawnClient(String input, String... command) throws IOException {
    return spawnIn(clientNamespace(), input, command);
  }

  /** Starts a command inside the namespace. */
  Peer spawn(String... command) throws IOException {
    return spawnIn(namespace, null, command);
  }

  private Peer spawnIn(String ns, String input, String... command) throws IOException {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", ns));
    full.addAll(List.of(command));
    Path log = dir.resolve("peer-" + processes.size() + ".log");
    ProcessBuilder builder = new ProcessBuilder(full).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    long started = System.nanoTime();
    Process process = builder.start();
    processes.add(process);
    try (var in = process.getOutputStream()) {
      if (input != null) {
        in.write(input.getBytes(StandardCharsets.UTF_8));
      }
    }
    return new Peer(process, log, started);
  }

  @Override
  public void close() {
    for (Process p : processes) {
      stop(p);
    }
    if (namespaceCreated) {
      runQuietly("ip", "netns", "del", namespace);
    }
    if (clientCreated) {
      runQuietly("ip", "netns", "del", clientNamespace());
    }
    if (linkCreated) {
      runQuietly("ip", "link", "del", hostInterface);
    }
    if (dir != null) {
      try (Stream<Path> files = Files.walk(dir)) {
        files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
      } catch (IOException e) {
        // best effort: a temp dir left behind is harmless
      }
    }
  }

  static String python() {
    return Files.isExecutable(Path.of("/usr/bin/python3")) ? "/usr/bin/python3" : "python3";
  }

  private static void stop(Process process) {
    if (!process.isAlive()) {
      return;
    }
    // ip netns exec execs the command, so this is the peer itself.
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private void inClient(String... command) throws IOException {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", clientNamespace()));
    full.addAll(List.of(command));
    run(full.toArray(String[]::new));
  }

  private void inNamespace(String... command) throws IOException {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
    full.addAll(List.of(command));
    run(full.toArray(String[]::new));
  }

  static String run(String... command) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Process process = builder.start();
    try {
      if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new IOException(String.join(" ", command) + " timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted");
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.exitValue() != 0) {
      throw new IOException(
          String.join(" ", command)
              + " failed (exit "
              + process.exitValue()
              + "): "
              + output.strip());
    }
    return output;
  }

  private static void runQuietly(String... command) {
    try {
      run(command);
    } catch (IOException e) {
      // clean-up of something already gone
    }
  }

  static boolean onPath(String tool) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return Stream.concat(Stream.of(path.split(":")), Stream.of("/usr/sbin", "/sbin", "/usr/bin"))
        .anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
  }

  static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "";
    } catch (IOException e) {
      return "";
    }
  }

  @Override
  public String toString() {
    return "onvif network "
        + namespace
        + " "
        + hostInterface
        + "="
        + hostAddress
        + " <-> "
        + peerAddress;
  }
}
