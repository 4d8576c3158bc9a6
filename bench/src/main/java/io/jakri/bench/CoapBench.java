package io.jakri.bench;

import io.jakri.handler.coap.CoapPeers;
import java.io.IOException;
import java.net.DatagramPacket;
import java.net.DatagramSocket;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * CoAP server appears → advertised: the agent (standalone, its own JVM, the coap handler plugin)
 * asks listed loopback hosts ({@code multicast: false}) in rounds as often as the handler allows
 * ({@code discoveryIntervalSeconds: 1} after {@code responseTimeoutMillis: 50} of answers); each
 * run starts a real {@code coap-server-notls} (Debian's libcoap3-bin, {@link CoapPeers} from the
 * coap handler's test-jar) on a listed port, timed from its start until the emulator sees the class
 * resource with one more healthy device. The first listed host is a UDP socket of this JVM (never
 * answering): the handler's GET reaching it marks a round's start ({@link PollingRuns}). Floor: the
 * same request from the JDK (a non-confirmable GET of {@code /.well-known/core} from an ephemeral
 * port, 50 ms for the answer), sent to the new server at each of the handler's round starts, until
 * it answers 2.05 with links; timed from the same start. Runs start their server at phases spread
 * over the round period. Not thread-safe.
 */
final class CoapBench {

  private static final String RESOURCE = "akri.sh/cp";
  private static final int TIMEOUT_MS = 50;

  /**
   * CoAP version 1, non-confirmable, token length 2; GET; message id 0x1234; token "jk"; Uri-Path
   * (option 11) ".well-known", Uri-Path "core".
   */
  private static final byte[] GET =
      "\u0052\u0001\u0012\u0034jk\u00BB.well-known\u0004core".getBytes(StandardCharsets.ISO_8859_1);

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  CoapBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Measures, or returns why it could not (libcoap3-bin missing). */
  Optional<String> run(int runs) throws Exception {
    Path root = Files.createDirectories(work.resolve("coap"));
    CoapPeers peers;
    try {
      peers = CoapPeers.start();
    } catch (CoapPeers.Unavailable e) {
      return Optional.of(e.getMessage());
    }
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try (peers;
        DatagramSocket marker = new DatagramSocket(new InetSocketAddress(loopback, 0));
        PollingRuns rounds = new PollingRuns()) {
      int[] ports = CoapPeers.freePorts(runs + 1); // [0]: the warm-up server
      StringBuilder hosts = new StringBuilder("\"127.0.0.1:" + marker.getLocalPort() + "\"");
      for (int k = 0; k <= runs; k++) {
        hosts.append(", \"127.0.0.1:").append(ports[k]).append('"');
      }
      Path plugins = HandlerAgentRun.plugins(options, root, "coap");
      Path config = Files.createDirectories(root.resolve("config"));
      HandlerAgentRun.writeConfiguration(
          config,
          "cp",
          "coap",
          "multicast: false\nhosts: ["
              + hosts
              + "]\ndiscoveryIntervalSeconds: 1\nresponseTimeoutMillis: "
              + TIMEOUT_MS
              + "\n");
      Thread markerThread = new Thread(() -> receiveRounds(marker, rounds), "bench-coap-marker");
      markerThread.setDaemon(true);
      markerThread.start();
      Map<Integer, Long> advertisedAt = new ConcurrentHashMap<>();
      try (HandlerAgentRun agent =
          HandlerAgentRun.start(
              options,
              agentJvm,
              root,
              config,
              plugins,
              HandlerAgentRun.healthyCounts(RESOURCE, advertisedAt))) {
        agent.await(() -> rounds.rounds() >= 2, "coap: the handler's rounds");
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        for (int k = 0; k <= runs; k++) {
          int port = ports[k];
          int want = k + 1;
          PollingRuns.Timing t =
              rounds.run(
                  agent,
                  k == 0 ? 0 : (k - 0.5) / runs,
                  () -> peers.spawn(CoapPeers.SERVER, "-A", "127.0.0.1", "-p", "" + port),
                  () -> get(loopback, port),
                  () -> advertisedAt.containsKey(want),
                  "coap: server on port " + port);
          if (k > 0) { // the first one warms the agent and the floor up
            handler.add((advertisedAt.get(want) - t.startedAt()) / 1e6);
            floor.add((t.floorAt() - t.startedAt()) / 1e6);
          }
        }
        double period = rounds.periodMs();
        System.out.printf(
            "  coap: agent %s ms, bare GET %s ms, round period %.0f ms%n", handler, floor, period);
        add.accept("coap_appear_to_advertised_ms", Stats.median(handler));
        add.accept("coap_client_appear_to_links_ms", Stats.median(floor));
        add.accept("coap_round_period_ms", period);
      }
    }
    return Optional.empty();
  }

  private static void receiveRounds(DatagramSocket marker, PollingRuns rounds) {
    DatagramPacket packet = new DatagramPacket(new byte[1500], 1500);
    while (!marker.isClosed()) {
      try {
        marker.receive(packet);
        rounds.roundStarted();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  /**
   * One round of the floor: a non-confirmable GET of /.well-known/core from a new ephemeral port;
   * true on a 2.05 with its token and links within the round's 50 ms (throws on none).
   */
  static boolean get(InetAddress host, int port) throws IOException {
    try (DatagramSocket socket = new DatagramSocket()) {
      socket.setSoTimeout(TIMEOUT_MS);
      socket.send(new DatagramPacket(GET, GET.length, host, port));
      DatagramPacket answer = new DatagramPacket(new byte[1500], 1500);
      socket.receive(answer);
      String text =
          new String(answer.getData(), 0, answer.getLength(), StandardCharsets.ISO_8859_1);
      return text.length() > 6
          && text.charAt(1) == 0x45 // 2.05 Content
          && text.startsWith("jk", 4)
          && text.contains("</");
    }
  }
}
