package io.jakri.bench;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * An avahi-daemon to publish services with, in a network namespace of its own reached through a
 * veth pair (avahi ignores loopback), with a private D-Bus system bus and a private tmpfs on {@code
 * /run/avahi-daemon}, so the host's avahi and D-Bus are neither needed nor touched. The same set-up
 * as the zeroconf handler's integration test. Needs root, iproute2, avahi-daemon, avahi-utils and
 * dbus; {@link #start} says why when it cannot. {@link #close()} removes everything it created. Not
 * thread-safe.
 */
final class AvahiPeer implements AutoCloseable {

  private final String id =
      Integer.toHexString(ThreadLocalRandom.current().nextInt(0x1000, 0xffff));
  private final int subnet = ThreadLocalRandom.current().nextInt(1, 255);
  private final String namespace = "jkb-" + id;
  private final String hostInterface = "jkb" + id + "a";
  private final String peerInterface = "jkb" + id + "b";
  private final String hostAddress = "10.214." + subnet + ".1";
  private final Path dir;
  private final List<Process> processes = new ArrayList<>();
  private String busAddress = "";
  private long dbusPid = -1;
  private boolean namespaceCreated;

  private AvahiPeer(Path dir) {
    this.dir = dir;
  }

  /** The peer, or why there is none (everything created so far removed again). */
  static AvahiPeer start(Path work) throws IOException {
    for (String tool : List.of("ip", "avahi-daemon", "avahi-publish", "dbus-daemon")) {
      if (!onPath(tool)) {
        throw new IOException("avahi missing: " + tool + " is not installed");
      }
    }
    AvahiPeer peer = new AvahiPeer(Files.createDirectories(work.resolve("avahi")));
    try {
      peer.setUp();
      return peer;
    } catch (IOException | RuntimeException e) {
      peer.close();
      throw e;
    }
  }

  /** The address on this side of the veth pair: browse here. */
  String hostAddress() {
    return hostAddress;
  }

  private void setUp() throws IOException {
    String peerAddress = "10.214." + subnet + ".2";
    run("ip", "netns", "add", namespace);
    namespaceCreated = true;
    run("ip", "link", "add", hostInterface, "type", "veth", "peer", "name", peerInterface);
    run("ip", "link", "set", peerInterface, "netns", namespace);
    run("ip", "addr", "add", hostAddress + "/30", "dev", hostInterface);
    run("ip", "link", "set", hostInterface, "multicast", "on", "up");
    run("ip", "netns", "exec", namespace, "ip", "link", "set", "lo", "up");
    run(
        "ip",
        "netns",
        "exec",
        namespace,
        "ip",
        "addr",
        "add",
        peerAddress + "/30",
        "dev",
        peerInterface);
    run(
        "ip",
        "netns",
        "exec",
        namespace,
        "ip",
        "link",
        "set",
        peerInterface,
        "multicast",
        "on",
        "up");
    Path bus = dir.resolve("bus");
    Path dbusConfig = dir.resolve("dbus.conf");
    Files.writeString(
        dbusConfig,
        "<!DOCTYPE busconfig PUBLIC \"-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN\"\n"
            + " \"http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd\">\n"
            + "<busconfig><type>system</type><listen>unix:path="
            + bus
            + "</listen><auth>EXTERNAL</auth><policy context=\"default\"><allow user=\"*\"/>"
            + "<allow own=\"*\"/><allow send_destination=\"*\"/><allow receive_sender=\"*\"/>"
            + "</policy></busconfig>\n");
    String pid = run("dbus-daemon", "--config-file=" + dbusConfig, "--fork", "--print-pid");
    dbusPid = Long.parseLong(pid.strip().lines().findFirst().orElseThrow().strip());
    busAddress = "unix:path=" + bus;
    Path avahiConfig = dir.resolve("avahi-daemon.conf");
    Files.writeString(
        avahiConfig,
        "[server]\nhost-name=jakri-bench-"
            + id
            + "\nuse-ipv4=yes\nuse-ipv6=no\nallow-interfaces="
            + peerInterface
            + "\nenable-dbus=yes\nratelimit-interval-usec=1000000\nratelimit-burst=1000\n"
            + "[wide-area]\nenable-wide-area=no\n[publish]\npublish-hinfo=no\n"
            + "publish-workstation=no\n[reflector]\n[rlimits]\n");
    Path log = dir.resolve("avahi-daemon.log");
    Process daemon =
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
    waitFor(log, "Server startup complete", daemon, "avahi-daemon");
  }

  /**
   * Starts {@code avahi-publish -s name type port} and waits until avahi has established it;
   * returns {@link System#nanoTime()} just before the process was started.
   */
  long publish(String name, String type, int port) throws IOException {
    Path log = dir.resolve("publish-" + processes.size() + ".log");
    long started = System.nanoTime();
    Process p = spawn(log, "avahi-publish", "-s", name, type, Integer.toString(port));
    waitFor(log, "Established under name", p, "avahi-publish " + name);
    return started;
  }

  private void waitFor(Path log, String text, Process process, String what) throws IOException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
    while (System.nanoTime() < deadline) {
      String out = read(log);
      if (out.contains(text)) {
        return;
      }
      if (!process.isAlive()) {
        throw new IOException(what + " exited: " + out.strip());
      }
      try {
        Thread.sleep(20);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
        throw new IOException("interrupted", e);
      }
    }
    throw new IOException(what + " did not get ready: " + read(log).strip());
  }

  @Override
  public void close() {
    for (Process p : processes) {
      p.destroy();
      try {
        if (!p.waitFor(5, TimeUnit.SECONDS)) {
          p.destroyForcibly();
        }
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
    }
    if (dbusPid > 0) {
      ProcessHandle.of(dbusPid).ifPresent(ProcessHandle::destroy);
    }
    if (namespaceCreated) {
      // Deleting the namespace deletes the veth pair with it.
      runQuietly("ip", "netns", "del", namespace);
      runQuietly("ip", "link", "del", hostInterface);
    }
  }

  private Process spawn(Path log, String... command) throws IOException {
    ProcessBuilder builder =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile());
    builder.environment().put("DBUS_SYSTEM_BUS_ADDRESS", busAddress);
    Process p = builder.start();
    processes.add(p);
    return p;
  }

  private String run(String... command) throws IOException {
    ProcessBuilder builder = new ProcessBuilder(command).redirectErrorStream(true);
    Process p = builder.start();
    try {
      if (!p.waitFor(20, TimeUnit.SECONDS)) {
        p.destroyForcibly();
        throw new IOException(String.join(" ", command) + " timed out");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IOException("interrupted", e);
    }
    String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
    if (p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + out.strip());
    }
    return out;
  }

  private void runQuietly(String... command) {
    try {
      run(command);
    } catch (IOException e) {
      // already gone
    }
  }

  private static boolean onPath(String tool) {
    String path = Optional.ofNullable(System.getenv("PATH")).orElse("/usr/bin:/bin");
    for (String d : (path + ":/usr/sbin:/sbin").split(":")) {
      if (Files.isExecutable(Path.of(d, tool))) {
        return true;
      }
    }
    return false;
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "";
    } catch (IOException e) {
      return "";
    }
  }
}
