package io.jakri.handler.zeroconf;

import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * A real mDNS peer for integration tests: an avahi-daemon in its own network namespace, reached
 * through a veth pair whose other end stays in the test's namespace, plus a private D-Bus system
 * bus so nothing touches (or depends on) the host's own bus or avahi.
 *
 * <pre>
 *   test JVM (root netns)            netns jkz-&lt;id&gt;
 *   jkz&lt;id&gt;a 10.213.N.1/30  &lt;--veth--&gt;  jkz&lt;id&gt;b 10.213.N.2/30  avahi-daemon
 * </pre>
 *
 * Avahi ignores loopback interfaces, which is why a veth pair is needed. avahi-daemon runs with
 * {@code --no-chroot --no-drop-root --no-rlimits} and its compiled-in runtime directory {@code
 * /run/avahi-daemon} (pid file, socket) is a private tmpfs inside the namespace's mount namespace,
 * so a host avahi is not disturbed. Needs root, iproute2, avahi-daemon, avahi-utils and dbus.
 * {@link #close()} removes everything it created and is safe to call after a partial start.
 *
 * <p>Public (and shipped in this module's test-jar) so the agent-level ITs in {@code it/} run
 * against the same peer. Threading: {@link #publish} and {@link #close()} may be called from any
 * thread; one peer per test class is the intended use.
 */
public final class AvahiPeer implements AutoCloseable {

  /** Why the peer could not be set up. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
      super(message);
    }
  }

  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

  private final String id =
      HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
  private final int subnet = ThreadLocalRandom.current().nextInt(1, 255);
  private final String namespace = "jkz-" + id;
  private final String hostInterface = "jkz" + id + "a";
  private final String peerInterface = "jkz" + id + "b";
  private final String hostAddress = "10.213." + subnet + ".1";
  private final String peerAddress = "10.213." + subnet + ".2";
  private final String peerHostName = "jakri-avahi-" + id;
  private final List<Process> processes = new CopyOnWriteArrayList<>();
  private Path dir;
  private String busAddress;
  private long dbusPid = -1;
  private boolean namespaceCreated;
  private boolean linkCreated;

  private AvahiPeer() {}

  /** Starts the peer, or explains why it cannot be started (having cleaned up). */
  public static AvahiPeer start() throws Unavailable {
    AvahiPeer peer = new AvahiPeer();
    try {
      peer.setUp();
      return peer;
    } catch (Unavailable e) {
      peer.close();
      throw e;
    } catch (IOException | RuntimeException e) {
      peer.close();
      throw new Unavailable("avahi peer set-up failed: " + e);
    }
  }

  /** The address on the test's side of the veth pair: browse here. */
  public String hostAddress() {
    return hostAddress;
  }

  /** The name of the test's side of the veth pair. */
  public String hostInterface() {
    return hostInterface;
  }

  /** The peer's address, which services resolve to. */
  public String peerAddress() {
    return peerAddress;
  }

  /** The peer's mDNS host name without {@code .local}. */
  public String peerHostName() {
    return peerHostName;
  }

  private void setUp() throws IOException, Unavailable {
    for (String tool : List.of("ip", "avahi-daemon", "avahi-publish", "dbus-daemon")) {
      if (!onPath(tool)) {
        throw new Unavailable(
            tool + " is not installed (apt-get install avahi-daemon avahi-utils dbus iproute2)");
      }
    }
    dir = Files.createTempDirectory("jakri-avahi-" + id + "-");

    run("ip", "netns", "add", namespace);
    namespaceCreated = true;
    run("ip", "link", "add", hostInterface, "type", "veth", "peer", "name", peerInterface);
    linkCreated = true;
    run("ip", "link", "set", peerInterface, "netns", namespace);
    run("ip", "addr", "add", hostAddress + "/30", "dev", hostInterface);
    run("ip", "link", "set", hostInterface, "multicast", "on", "up");
    inNamespace("ip", "link", "set", "lo", "up");
    inNamespace("ip", "addr", "add", peerAddress + "/30", "dev", peerInterface);
    inNamespace("ip", "link", "set", peerInterface, "multicast", "on", "up");

    Path bus = dir.resolve("system_bus_socket");
    busAddress = "unix:path=" + bus;
    Path dbusConfig = dir.resolve("dbus.conf");
    Files.writeString(
        dbusConfig,
        """
        <!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
         "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
        <busconfig>
          <type>system</type>
          <listen>%s</listen>
          <auth>EXTERNAL</auth>
          <policy context="default">
            <allow user="*"/>
            <allow own="*"/>
            <allow send_destination="*"/>
            <allow receive_sender="*"/>
          </policy>
        </busconfig>
        """
            .formatted(busAddress));
    String pid = run("dbus-daemon", "--config-file=" + dbusConfig, "--fork", "--print-pid").strip();
    dbusPid = Long.parseLong(pid.lines().findFirst().orElseThrow().strip());

    Path avahiConfig = dir.resolve("avahi-daemon.conf");
    Files.writeString(
        avahiConfig,
        """
        [server]
        host-name=%s
        use-ipv4=yes
        use-ipv6=no
        allow-interfaces=%s
        enable-dbus=yes
        ratelimit-interval-usec=1000000
        ratelimit-burst=1000
        [wide-area]
        enable-wide-area=no
        [publish]
        publish-hinfo=no
        publish-workstation=no
        [reflector]
        [rlimits]
        """
            .formatted(peerHostName, peerInterface));
    Path log = dir.resolve("avahi-daemon.log");
    // ip netns exec gives the command a mount namespace of its own: the tmpfs hides the host's
    // /run/avahi-daemon (pid file, socket) from this daemon and vice versa.
    spawn(
        log,
        "ip",
        "netns",
        "exec",
        namespace,
        "sh",
        "-c",
        "mkdir -p /run/avahi-daemon && mount -t tmpfs jakri-avahi /run/avahi-daemon && exec"
            + " avahi-daemon --no-chroot --no-drop-root --no-rlimits --no-proc-title -f "
            + avahiConfig);
    try {
      await("avahi-daemon startup")
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(50))
          .until(() -> read(log).contains("Server startup complete") || exited(processes.get(0)));
    } catch (ConditionTimeoutException e) {
      throw new Unavailable("avahi-daemon did not start: " + read(log));
    }
    if (exited(processes.get(0))) {
      throw new Unavailable("avahi-daemon exited: " + read(log));
    }
  }

  /** A service published with {@code avahi-publish -s}; closing it unregisters the service. */
  public final class Published implements AutoCloseable {
    public final String name;

    /** {@link System#nanoTime()} just before avahi-publish was started. */
    public final long startedNanos;

    private final Process process;

    private Published(String name, long startedNanos, Process process) {
      this.name = name;
      this.startedNanos = startedNanos;
      this.process = process;
    }

    @Override
    public void close() {
      stop(process);
    }
  }

  /**
   * Publishes a service and waits until avahi has established it.
   *
   * @throws IOException when avahi-publish refuses it (the message holds its output)
   */
  public Published publish(String name, String type, int port, List<String> txt)
      throws IOException {
    List<String> command = new ArrayList<>(List.of("avahi-publish", "-s", name, type, "" + port));
    command.addAll(txt);
    Path log = dir.resolve("publish-" + processes.size() + ".log");
    long started = System.nanoTime();
    Process process = spawn(log, command.toArray(String[]::new));
    try {
      await("avahi-publish " + name)
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> read(log).contains("Established under name") || exited(process));
    } catch (ConditionTimeoutException e) {
      stop(process);
      throw new IOException("avahi-publish did not establish " + name + ": " + read(log));
    }
    if (exited(process)) {
      throw new IOException("avahi-publish failed for " + name + ": " + read(log).strip());
    }
    return new Published(name, started, process);
  }

  @Override
  public void close() {
    for (Process p : processes) {
      stop(p);
    }
    if (dbusPid > 0) {
      ProcessHandle.of(dbusPid).ifPresent(ProcessHandle::destroy);
    }
    if (namespaceCreated) {
      runQuietly("ip", "netns", "del", namespace);
    }
    if (linkCreated) {
      // Gone with the namespace normally (deleting one end of a veth pair deletes both).
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

  private Process spawn(Path log, String... command) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    builder.redirectOutput(log.toFile());
    builder.environment().put("DBUS_SYSTEM_BUS_ADDRESS", busAddress);
    Process process = builder.start();
    processes.add(process);
    return process;
  }

  private static void stop(Process process) {
    if (!process.isAlive()) {
      return;
    }
    process.destroy();
    try {
      if (!process.waitFor(5, TimeUnit.SECONDS)) {
        process.destroyForcibly().waitFor(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static boolean exited(Process process) {
    return !process.isAlive();
  }

  private void inNamespace(String... command) throws IOException, Unavailable {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", namespace));
    full.addAll(List.of(command));
    run(full.toArray(String[]::new));
  }

  private String run(String... command) throws IOException, Unavailable {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    if (busAddress != null) {
      builder.environment().put("DBUS_SYSTEM_BUS_ADDRESS", busAddress);
    }
    Process process = builder.start();
    try {
      if (!process.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        process.destroyForcibly();
        throw new Unavailable(String.join(" ", command) + " timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new Unavailable("interrupted");
    }
    String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (process.exitValue() != 0) {
      throw new Unavailable(
          String.join(" ", command)
              + " failed (exit "
              + process.exitValue()
              + "): "
              + output.strip());
    }
    return output;
  }

  private void runQuietly(String... command) {
    try {
      run(command);
    } catch (IOException | Unavailable e) {
      // clean-up of something already gone
    }
  }

  private static boolean onPath(String tool) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return Stream.concat(Stream.of(path.split(":")), Stream.of("/usr/sbin", "/sbin"))
        .anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "";
    } catch (IOException e) {
      return "";
    }
  }

  /** For messages: what this peer is. */
  @Override
  public String toString() {
    return "avahi peer "
        + Map.of(
            "namespace", namespace, "host", hostInterface + "=" + hostAddress, "peer", peerAddress);
  }
}
