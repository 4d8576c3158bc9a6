package io.jakri.bench;

import io.jakri.handler.modbus.ModbusPeers;
import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * Modbus TCP server appears → advertised: the agent (standalone, its own JVM, the modbus handler
 * plugin) scans listed loopback ports as often as the handler allows ({@code scanIntervalSeconds:
 * 1}, {@code connectionsPerSecond: 1000}); each run starts a real pymodbus server (Debian's
 * python3-pymodbus, {@link ModbusPeers} from the modbus handler's test-jar) on a listed port, timed
 * from the start of its process until the emulator sees the class resource with one more healthy
 * device. The first listed port is a server socket of this JVM that accepts and closes at once (the
 * handler logs one warning for it): the handler's connection marks a scan's start ({@link
 * PollingRuns}). Floor: a bare JDK socket connecting to the new server and sending Read Device
 * Identification (43/14, regular objects, unit 1) at each of the handler's scan starts, until a
 * whole identification answer is read; timed from the same start. Runs start their server at phases
 * spread over the scan period. Not thread-safe.
 */
final class ModbusBench {

  private static final String RESOURCE = "akri.sh/mb";

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  ModbusBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Measures, or returns why it could not (pymodbus missing); at most 14 runs (16 ports). */
  Optional<String> run(int runs) throws Exception {
    Path root = Files.createDirectories(work.resolve("modbus"));
    ModbusPeers peers;
    try {
      peers = ModbusPeers.create();
    } catch (ModbusPeers.Unavailable e) {
      return Optional.of(e.getMessage());
    }
    InetAddress loopback = InetAddress.getLoopbackAddress();
    try (peers;
        ServerSocket marker = new ServerSocket(0, 50, loopback);
        PollingRuns scans = new PollingRuns()) {
      int[] ports = new int[runs + 1]; // [0]: the warm-up server
      StringBuilder listed = new StringBuilder().append(marker.getLocalPort());
      for (int k = 0; k <= runs; k++) {
        try (ServerSocket free = new ServerSocket(0, 1, loopback)) {
          ports[k] = free.getLocalPort();
        }
        listed.append(", ").append(ports[k]);
      }
      Path plugins = HandlerAgentRun.plugins(options, root, "modbus");
      Path config = Files.createDirectories(root.resolve("config"));
      HandlerAgentRun.writeConfiguration(
          config,
          "mb",
          "modbus",
          "addresses: [127.0.0.1]\nports: ["
              + listed
              + "]\nunitIds: [1]\nscanIntervalSeconds: 1\nconnectionsPerSecond: 1000\n");
      Thread markerThread = new Thread(() -> acceptScans(marker, scans), "bench-modbus-marker");
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
        agent.await(() -> scans.rounds() >= 2, "modbus: the handler's scans");
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        for (int k = 0; k <= runs; k++) {
          int port = ports[k];
          int want = k + 1;
          String product = "JK-" + k;
          PollingRuns.Timing t =
              scans.run(
                  agent,
                  k == 0 ? 0 : (k - 0.5) / runs,
                  () -> peers.start(port, "Acme", product, "1.0", Optional.empty()),
                  () -> readDeviceId(loopback, port),
                  () -> advertisedAt.containsKey(want),
                  "modbus: server on port " + port);
          if (k > 0) { // the first one warms the agent and the floor up
            handler.add((advertisedAt.get(want) - t.startedAt()) / 1e6);
            floor.add((t.floorAt() - t.startedAt()) / 1e6);
          }
        }
        double period = scans.periodMs();
        System.out.printf(
            "  modbus: agent %s ms, bare 43/14 %s ms, scan period %.0f ms%n",
            handler, floor, period);
        add.accept("modbus_appear_to_advertised_ms", Stats.median(handler));
        add.accept("modbus_bare_read_device_id_ms", Stats.median(floor));
        add.accept("modbus_scan_period_ms", period);
      }
    }
    return Optional.empty();
  }

  private static void acceptScans(ServerSocket marker, PollingRuns scans) {
    while (!marker.isClosed()) {
      try {
        Socket connection = marker.accept();
        scans.roundStarted();
        connection.close();
      } catch (IOException e) {
        return; // closed
      }
    }
  }

  /**
   * Connects, sends Read Device Identification (function 0x2B, MEI 0x0E, read code 2, object 0) to
   * unit 1 and reads the whole reply; true when it is an identification (not an exception).
   */
  static boolean readDeviceId(InetAddress host, int port) throws IOException {
    try (Socket socket = new Socket()) {
      socket.setTcpNoDelay(true);
      socket.connect(new InetSocketAddress(host, port), 1000);
      socket.setSoTimeout(1000);
      OutputStream out = socket.getOutputStream();
      // MBAP: transaction 1, protocol 0, length 5 (unit + PDU), unit 1; PDU: 2B 0E 02 00.
      out.write(new byte[] {0, 1, 0, 0, 0, 5, 1, 0x2B, 0x0E, 0x02, 0x00});
      DataInputStream in = new DataInputStream(socket.getInputStream());
      byte[] header = new byte[7];
      in.readFully(header);
      int length = ((header[4] & 0xFF) << 8) | (header[5] & 0xFF);
      if (length < 2) {
        return false;
      }
      byte[] pdu = new byte[length - 1];
      in.readFully(pdu);
      return pdu.length > 1 && pdu[0] == 0x2B && pdu[1] == 0x0E;
    }
  }
}
