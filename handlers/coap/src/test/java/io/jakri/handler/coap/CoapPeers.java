package io.jakri.handler.coap;

import static org.awaitility.Awaitility.await;

import java.io.Closeable;
import java.io.IOException;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.ServerSocket;
import java.net.SocketException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.stream.IntStream;
import java.util.stream.Stream;
import org.awaitility.core.ConditionTimeoutException;

/**
 * Real CoAP peers for integration tests and the bench (from this module's test-jar), from Debian's
 * {@code libcoap3-bin}: {@code coap-server-notls} (serves {@code /}, {@code /time} with {@code
 * rt="ticks";if="clock"}, {@code /async}, {@code /example_data}, and with {@code -d} resources
 * created by PUT), {@code coap-rd-notls} (a resource directory: {@code /rd} with {@code
 * rt="core.rd"}) and {@code coap-client-notls}. On loopback, or each in a network namespace of its
 * own reached through a veth pair, for multicast:
 *
 * <pre>
 *   test JVM (root netns)                       netns jkc-&lt;id&gt;
 *   jkc&lt;id&gt;a 10.214.N.1/30, fe80::a:1  &lt;--veth--&gt;  jkc&lt;id&gt;b 10.214.N.2/30, fe80::a:2
 * </pre>
 *
 * Needs root and iproute2 for namespaces. {@link #close()} removes everything it created and is
 * safe after a partial start. One instance per test class.
 */
public final class CoapPeers implements AutoCloseable {

  /** Why peers cannot be used. */
  public static final class Unavailable extends Exception {
    private static final long serialVersionUID = 1L;

    Unavailable(String message) {
      super(message);
    }
  }

  public static final String SERVER = "coap-server-notls";
  static final String RD = "coap-rd-notls";
  static final String CLIENT = "coap-client-notls";
  private static final Duration COMMAND_TIMEOUT = Duration.ofSeconds(20);

  private final List<Process> processes = new CopyOnWriteArrayList<>();
  private final List<String> namespaces = new CopyOnWriteArrayList<>();
  private final List<String> links = new CopyOnWriteArrayList<>();
  private final Path dir;

  private CoapPeers(Path dir) {
    this.dir = dir;
  }

  /** Checks the tools are there. */
  public static CoapPeers start() throws Unavailable {
    for (String tool : List.of(SERVER, RD, CLIENT)) {
      if (!onPath(tool)) {
        throw new Unavailable(tool + " is not installed (apt-get install libcoap3-bin)");
      }
    }
    try {
      return new CoapPeers(Files.createTempDirectory("jakri-coap-"));
    } catch (IOException e) {
      throw new Unavailable("no temp dir: " + e);
    }
  }

  /** A port free for both UDP and TCP (libcoap listens on both). */
  public static int freePort() throws IOException {
    return freePorts(1)[0];
  }

  /**
   * {@code n} distinct ports free for both UDP and TCP. Every socket stays open until all ports are
   * known: a port closed and asked for again can come back.
   */
  public static int[] freePorts(int n) throws IOException {
    List<Closeable> held = new ArrayList<>();
    try {
      int[] ports = new int[n];
      int found = 0;
      for (int tries = 0; found < n && tries < 100 * n; tries++) {
        ServerSocket tcp = new ServerSocket(0);
        held.add(tcp);
        try {
          held.add(new DatagramSocket(tcp.getLocalPort()));
          ports[found++] = tcp.getLocalPort();
        } catch (SocketException e) {
          // in use for UDP: another one
        }
      }
      if (found < n) {
        throw new IOException("no " + n + " ports free for both UDP and TCP");
      }
      return ports;
    } finally {
      for (Closeable socket : held) {
        socket.close();
      }
    }
  }

  /** A running peer process. */
  public final class Peer implements AutoCloseable {
    final Process process;
    final long startedNanos;
    final Path log;

    Peer(Process process, long startedNanos, Path log) {
      this.process = process;
      this.startedNanos = startedNanos;
      this.log = log;
    }

    @Override
    public void close() {
      stop(process);
    }

    String output() {
      return read(log);
    }
  }

  /** A network namespace with a veth pair to the test's namespace. */
  final class Namespace {
    final String name;
    final String hostInterface;
    final String peerInterface;
    final String hostAddress;
    final String peerAddress;
    static final String PEER_LINK_LOCAL = "fe80::a:2";

    Namespace(String id, int subnet) {
      name = "jkc-" + id;
      hostInterface = "jkc" + id + "a";
      peerInterface = "jkc" + id + "b";
      hostAddress = "10.214." + subnet + ".1";
      peerAddress = "10.214." + subnet + ".2";
    }

    /** Runs {@code command} inside the namespace, logging to a file. */
    Peer spawn(String... command) throws IOException {
      List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", name));
      full.addAll(List.of(command));
      return CoapPeers.this.spawn(full.toArray(String[]::new));
    }
  }

  /**
   * Creates a namespace (IPv4 and link-local IPv6 without duplicate address detection) on a subnet
   * no other interface of this host uses ({@link #freeSubnet()}).
   */
  Namespace namespace() throws Unavailable {
    if (!onPath("ip")) {
      throw new Unavailable("ip is not installed (apt-get install iproute2)");
    }
    String id = HexFormat.of().toHexDigits((short) ThreadLocalRandom.current().nextInt());
    Namespace ns;
    try {
      ns = new Namespace(id, freeSubnet());
    } catch (IOException e) {
      throw new Unavailable(e.getMessage());
    }
    try {
      run("ip", "netns", "add", ns.name);
      namespaces.add(ns.name);
      run("ip", "link", "add", ns.hostInterface, "type", "veth", "peer", "name", ns.peerInterface);
      links.add(ns.hostInterface);
      run("ip", "link", "set", ns.peerInterface, "netns", ns.name);
      run("ip", "link", "set", ns.hostInterface, "addrgenmode", "none");
      run("ip", "addr", "add", ns.hostAddress + "/30", "dev", ns.hostInterface);
      run("ip", "-6", "addr", "add", "fe80::a:1/64", "dev", ns.hostInterface, "nodad");
      run("ip", "link", "set", ns.hostInterface, "multicast", "on", "up");
      in(ns, "ip", "link", "set", "lo", "up");
      in(ns, "ip", "link", "set", ns.peerInterface, "addrgenmode", "none");
      in(ns, "ip", "addr", "add", ns.peerAddress + "/30", "dev", ns.peerInterface);
      in(
          ns,
          "ip",
          "-6",
          "addr",
          "add",
          Namespace.PEER_LINK_LOCAL + "/64",
          "dev",
          ns.peerInterface,
          "nodad");
      in(ns, "ip", "link", "set", ns.peerInterface, "multicast", "on", "up");
      // Multicast goes out of the veth: a route for the groups on the peer's side.
      in(ns, "ip", "route", "add", "224.0.0.0/4", "dev", ns.peerInterface);
    } catch (IOException e) {
      throw new Unavailable("namespace set-up failed: " + e.getMessage());
    }
    return ns;
  }

  /**
   * A third octet N such that no address of this host lies in 10.214.N.0/24, tried in random order.
   * Two host interfaces with one IPv4 address break the multicast tests in a way that looks like a
   * lost packet: the JDK names the interface of an IPv4 socket's {@code IP_MULTICAST_IF} by its
   * address, and Linux then takes whichever interface with that address it finds first (the
   * newest), so a group request meant for one namespace leaves through the other. Namespaces are
   * created one after the other, and each one's host address is on its interface before the next is
   * picked, so no two are alike.
   */
  private static int freeSubnet() throws IOException {
    List<String> taken = new ArrayList<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      for (InetAddress address : Collections.list(nif.getInetAddresses())) {
        taken.add(address.getHostAddress());
      }
    }
    List<Integer> octets = new ArrayList<>(IntStream.range(1, 255).boxed().toList());
    Collections.shuffle(octets);
    for (int octet : octets) {
      String prefix = "10.214." + octet + ".";
      if (taken.stream().noneMatch(a -> a.startsWith(prefix))) {
        return octet;
      }
    }
    throw new IOException("every 10.214.N.0/24 is in use on this host");
  }

  private void in(Namespace ns, String... command) throws IOException, Unavailable {
    List<String> full = new ArrayList<>(List.of("ip", "netns", "exec", ns.name));
    full.addAll(List.of(command));
    run(full.toArray(String[]::new));
  }

  /** {@code coap-server-notls} on 127.0.0.1:port, with up to 10 resources created by PUT. */
  Peer loopbackServer(int port) throws IOException {
    Peer peer = spawn(SERVER, "-A", "127.0.0.1", "-p", "" + port, "-d", "10");
    awaitAnswer("coap://127.0.0.1:" + port + "/.well-known/core", peer);
    return peer;
  }

  /** {@code coap-rd-notls} on 127.0.0.1:port. */
  Peer loopbackResourceDirectory(int port) throws IOException {
    Peer peer = spawn(RD, "-A", "127.0.0.1", "-p", "" + port);
    awaitAnswer("coap://127.0.0.1:" + port + "/.well-known/core", peer);
    return peer;
  }

  /** {@code coap-server-notls} in the namespace, on 5683, joined to {@code group}. */
  Peer multicastServer(Namespace ns, String group, String... extra) throws IOException {
    List<String> command =
        new ArrayList<>(List.of(SERVER, "-p", "5683", "-g", group, "-G", ns.peerInterface));
    command.addAll(List.of(extra));
    Peer peer = ns.spawn(command.toArray(String[]::new));
    awaitAnswer("coap://" + ns.peerAddress + ":5683/.well-known/core", peer);
    return peer;
  }

  /** The payload of a GET by {@code coap-client}, or "" when it got no answer. */
  String get(String uri) throws IOException {
    return client("-m", "get", "-B", "1", uri);
  }

  /** A PUT by {@code coap-client} (creates a resource on a server started with -d). */
  String put(String uri, String payload) throws IOException {
    return client("-m", "put", "-B", "2", "-e", payload, uri);
  }

  private String client(String... args) throws IOException {
    List<String> command = new ArrayList<>(List.of(CLIENT));
    command.addAll(List.of(args));
    Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
    try {
      if (!p.waitFor(COMMAND_TIMEOUT.toSeconds(), TimeUnit.SECONDS)) {
        p.destroyForcibly();
        return "";
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      return "";
    }
    return new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
  }

  private void awaitAnswer(String uri, Peer peer) throws IOException {
    try {
      await("answer of " + uri)
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(20))
          .until(() -> !peer.process.isAlive() || get(uri).contains("</"));
    } catch (ConditionTimeoutException e) {
      throw new IOException(uri + " did not answer: " + peer.output());
    }
    if (!peer.process.isAlive()) {
      throw new IOException(uri + ": the peer exited: " + peer.output());
    }
  }

  /**
   * Starts {@code command}, its output to a log file; stopped by {@link #close()} at the latest.
   */
  public Peer spawn(String... command) throws IOException {
    Path log = dir.resolve("peer-" + processes.size() + ".log");
    long started = System.nanoTime();
    Process process =
        new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
    processes.add(process);
    return new Peer(process, started, log);
  }

  @Override
  public void close() {
    for (Process p : processes) {
      stop(p);
    }
    for (String ns : namespaces) {
      runQuietly("ip", "netns", "del", ns);
    }
    for (String link : links) {
      runQuietly("ip", "link", "del", link);
    }
    try (Stream<Path> files = Files.walk(dir)) {
      files.sorted(Comparator.reverseOrder()).forEach(p -> p.toFile().delete());
    } catch (IOException e) {
      // best effort
    }
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

  private static String run(String... command) throws IOException {
    Process process = new ProcessBuilder(command).redirectErrorStream(true).start();
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
      // already gone
    }
  }

  static boolean onPath(String tool) {
    String path = System.getenv().getOrDefault("PATH", "/usr/sbin:/usr/bin:/sbin:/bin");
    return Stream.concat(Stream.of(path.split(":")), Stream.of("/usr/sbin", "/sbin", "/usr/bin"))
        .anyMatch(d -> Files.isExecutable(Path.of(d, tool)));
  }

  private static String read(Path file) {
    try {
      return Files.exists(file) ? Files.readString(file, StandardCharsets.ISO_8859_1) : "";
    } catch (IOException e) {
      return "";
    }
  }
}
