package io.jakri.handler.opcua;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Real OPC UA peers for integration tests: node-opcua (pinned in {@code src/test/node/package.json}
 * and its lock file) run as separate {@code node} processes by {@code
 * src/test/node/opcua-peer.mjs}, each on a free loopback port with a private PKI directory. Roles:
 * a local discovery server (mDNS off), a server (optionally registered with a discovery server,
 * optionally advertising another host name) and a "flood" server whose FindServers answer is made
 * up.
 *
 * <p>The node modules must be installed first: {@code npm ci --prefix handlers/opcua/src/test/node}
 * ({@code .ci/run} does). The directory is taken from the system property {@value #DIR_PROPERTY},
 * else looked for from the working directory upwards. Public and shipped in the test-jar for the
 * agent-level IT and the bench. Thread-safe; {@link #close()} stops every peer it started.
 */
public final class OpcuaPeers implements AutoCloseable {

  /** The system property naming the directory that holds opcua-peer.mjs and node_modules. */
  public static final String DIR_PROPERTY = "jakri.opcua.peers.dir";

  private static final Duration READY_TIMEOUT = Duration.ofSeconds(90);
  private static final Pattern READY = Pattern.compile("READY (\\{.*\\})");
  private static final Pattern DISCOVERY_URLS =
      Pattern.compile("\"discoveryUrls\":\\[\"([^\"]*)\"");

  /** Why peers cannot be started here. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
      super(message);
    }
  }

  private final Path dir;
  private final Path work;
  private final List<Peer> peers = new CopyOnWriteArrayList<>();

  private OpcuaPeers(Path dir, Path work) {
    this.dir = dir;
    this.work = work;
  }

  /** Checks that node and the pinned node-opcua modules are there. */
  public static OpcuaPeers create() throws Unavailable {
    Path dir =
        peerDir().orElseThrow(() -> new Unavailable("src/test/node of handlers/opcua not found"));
    if (!Files.isDirectory(dir.resolve("node_modules/node-opcua-server"))) {
      throw new Unavailable(
          "node-opcua is not installed in " + dir + " (run: npm ci --prefix " + dir + ")");
    }
    if (!onPath("node")) {
      throw new Unavailable("node is not installed");
    }
    try {
      return new OpcuaPeers(dir, Files.createTempDirectory("jakri-opcua-peers-"));
    } catch (IOException e) {
      throw new Unavailable("no temp dir: " + e);
    }
  }

  private static Optional<Path> peerDir() {
    String property = System.getProperty(DIR_PROPERTY);
    if (property != null && !property.isBlank()) {
      return Optional.of(Path.of(property));
    }
    Path here = Path.of("").toAbsolutePath();
    for (Path p = here; p != null; p = p.getParent()) {
      for (String candidate : List.of("src/test/node", "handlers/opcua/src/test/node")) {
        Path dir = p.resolve(candidate);
        if (Files.isRegularFile(dir.resolve("opcua-peer.mjs"))) {
          return Optional.of(dir);
        }
      }
    }
    return Optional.empty();
  }

  /** A port on 127.0.0.1 that nothing listens on right now. */
  public static int freePort() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  /** One running node-opcua process. */
  public final class Peer implements AutoCloseable {
    private final String name;
    private final int port;
    private final Process process;
    private final Path log;
    private volatile String discoveryUrl;

    /** {@link System#nanoTime()} just before the process was started. */
    public final long startedNanos;

    private Peer(String name, int port, Process process, Path log, long startedNanos) {
      this.name = name;
      this.port = port;
      this.process = process;
      this.log = log;
      this.startedNanos = startedNanos;
    }

    public String name() {
      return name;
    }

    public int port() {
      return port;
    }

    /** The URL to ask: {@code opc.tcp://127.0.0.1:<port>/}. */
    public String url() {
      return "opc.tcp://127.0.0.1:" + port + "/";
    }

    /** The first discovery URL the peer itself advertises (its READY line). */
    public String advertisedUrl() {
      return discoveryUrl;
    }

    public boolean alive() {
      return process.isAlive();
    }

    public Path log() {
      return log;
    }

    /** Stops the peer (SIGTERM: a registered server unregisters) and waits for it to exit. */
    @Override
    public void close() {
      stop(process);
    }

    /** Kills the peer at once (SIGKILL): it unregisters from nothing. */
    public void kill() {
      process.destroyForcibly();
      try {
        process.waitFor(10, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }

    @Override
    public String toString() {
      return name + "@" + port;
    }
  }

  /** Starts a local discovery server (not yet awaited: see {@link #awaitReady}). */
  public Peer lds(String name) throws IOException {
    return spawn(name, List.of("lds"));
  }

  /**
   * Starts a server named {@code name}; with {@code hostname}, its URLs carry that host; with
   * {@code lds}, it registers there and is ready only once registered.
   */
  public Peer server(String name, Optional<String> hostname, Optional<Peer> lds)
      throws IOException {
    List<String> args = new ArrayList<>(List.of("server", "--name", name));
    hostname.ifPresent(h -> args.addAll(List.of("--hostname", h)));
    lds.ifPresent(l -> args.addAll(List.of("--lds", "opc.tcp://127.0.0.1:" + l.port())));
    return spawn(name, args);
  }

  /** Starts a server whose FindServers answers {@code count} made-up, partly hostile entries. */
  public Peer flood(String name, int count) throws IOException {
    return spawn(name, List.of("flood", "--count", "" + count));
  }

  private Peer spawn(String name, List<String> roleArgs) throws IOException {
    int port = freePort();
    Path pki = work.resolve(name + "-" + port);
    List<String> command = new ArrayList<>(List.of("node", "opcua-peer.mjs", roleArgs.get(0)));
    command.addAll(List.of("--port", "" + port, "--pki", pki.toString()));
    command.addAll(roleArgs.subList(1, roleArgs.size()));
    Path log = work.resolve(name + "-" + port + ".log");
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .directory(dir.toFile())
            .redirectErrorStream(true)
            .redirectOutput(log.toFile());
    long started = System.nanoTime();
    Process process = builder.start();
    Peer peer = new Peer(name, port, process, log, started);
    peers.add(peer);
    return peer;
  }

  /** Waits until every peer said READY; fails with the log of one that did not. */
  public void awaitReady(Peer... waitFor) throws Unavailable {
    for (Peer peer : waitFor) {
      try {
        await(peer + " READY")
            .atMost(READY_TIMEOUT)
            .pollInterval(Duration.ofMillis(20))
            .until(() -> READY.matcher(read(peer.log)).find() || !peer.process.isAlive());
      } catch (ConditionTimeoutException e) {
        throw new Unavailable(
            peer + " not ready in " + READY_TIMEOUT + ": " + tail(read(peer.log)));
      }
      Matcher m = READY.matcher(read(peer.log));
      if (!m.find()) {
        throw new Unavailable(peer + " exited: " + tail(read(peer.log)));
      }
      Matcher urls = DISCOVERY_URLS.matcher(m.group(1));
      peer.discoveryUrl = urls.find() ? urls.group(1) : peer.url();
    }
  }

  @Override
  public void close() {
    for (Peer peer : peers) {
      stop(peer.process);
    }
    try (Stream<Path> files = Files.walk(work)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort: a temp dir left behind is harmless
    }
  }

  private static void stop(Process process) {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(10, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "";
    } catch (IOException e) {
      return "";
    }
  }

  private static String tail(String text) {
    return text.length() > 2000 ? text.substring(text.length() - 2000) : text;
  }

  private static boolean onPath(String tool) {
    String path = System.getenv().getOrDefault("PATH", "/usr/local/bin:/usr/bin:/bin");
    return Stream.of(path.split(":")).anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
  }
}
