package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.RecordingListener;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class ModbusDiscoveryTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  private ScheduledExecutorService scheduler;
  private FakePeers peers;
  private final List<Discovery> discoveries = new ArrayList<>();
  private ListAppender<ILoggingEvent> log;

  @BeforeEach
  void setUp() {
    scheduler = Executors.newScheduledThreadPool(2);
    peers = new FakePeers();
    log = new ListAppender<>();
    log.start();
    ((Logger) LoggerFactory.getLogger(ModbusDiscovery.class)).addAppender(log);
  }

  @AfterEach
  void tearDown() throws Exception {
    discoveries.forEach(Discovery::close);
    peers.close();
    scheduler.shutdownNow();
    ((Logger) LoggerFactory.getLogger(ModbusDiscovery.class)).detachAppender(log);
  }

  private RecordingListener start(ModbusHandler handler, String details) throws Exception {
    RecordingListener listener = new RecordingListener();
    discoveries.add(
        handler.start(
            new DiscoveryContext("plcs", "node-a", details, Map.of(), scheduler), listener));
    return listener;
  }

  private RecordingListener start(String details) throws Exception {
    return start(new ModbusHandler(), details);
  }

  private static String ports(FakePeers.Peer... peers) {
    StringBuilder s = new StringBuilder("ports: [");
    for (int i = 0; i < peers.length; i++) {
      s.append(i == 0 ? "" : ", ").append(peers[i].port());
    }
    return s.append("]\n").toString();
  }

  @Test
  void identifiedPeersBecomeSharedDevicesWithModbusProperties() throws Exception {
    FakePeers.Peer plc =
        peers.start(FakePeers.identifying(10, "Acme", "PC-1", "1.0", "", "Widget"));
    FakePeers.Peer plain = peers.start(FakePeers.NO_IDENTIFICATION);
    RecordingListener listener =
        start(
            "addresses: [127.0.0.1]\n"
                + ports(plc, plain)
                + "unitIds: [1]\nscanIntervalSeconds: 1\n");

    await().atMost(WAIT).until(() -> listener.last().isPresent());
    String endpoint = "tcp://127.0.0.1:" + plc.port();
    assertThat(listener.lastIds()).containsExactly(endpoint + "/1");
    DiscoveredDevice device = listener.last().orElseThrow().get(0);
    assertThat(device.shared()).isTrue();
    assertThat(device.properties())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "MODBUS_HOST", "127.0.0.1",
                "MODBUS_PORT", Integer.toString(plc.port()),
                "MODBUS_UNIT_ID", "1",
                "MODBUS_ENDPOINT", endpoint,
                "MODBUS_VENDOR", "Acme",
                "MODBUS_PRODUCT_CODE", "PC-1",
                "MODBUS_REVISION", "1.0",
                "MODBUS_VENDOR_URL", "",
                "MODBUS_PRODUCT_NAME", "Widget"));
  }

  @Test
  void filtersSelectDevices() throws Exception {
    FakePeers.Peer a = peers.start(FakePeers.identifying(10, "Acme", "PC-1", "1.0"));
    FakePeers.Peer b = peers.start(FakePeers.identifying(10, "Bolt", "X-7", "2.3"));
    RecordingListener included =
        start(
            "addresses: [127.0.0.1]\n"
                + ports(a, b)
                + "vendor: {action: Include, items: [Acme]}\n");
    RecordingListener excluded =
        start(
            "addresses: [127.0.0.1]\n"
                + ports(a, b)
                + "revision: {action: Exclude, items: [\"1\\\\..*\"], match: Regex}\n");
    await().atMost(WAIT).until(() -> included.last().isPresent() && excluded.last().isPresent());
    assertThat(included.lastIds()).containsExactly("tcp://127.0.0.1:" + a.port() + "/1");
    assertThat(excluded.lastIds()).containsExactly("tcp://127.0.0.1:" + b.port() + "/1");
  }

  @Test
  void silentDeviceLeavesAfterTheGraceAndNotBefore() throws Exception {
    FakePeers.Peer plc = peers.start(FakePeers.identifying(10, "Acme", "PC-1", "1.0"));
    RecordingListener listener =
        start(
            "addresses: [127.0.0.1]\n"
                + ports(plc)
                + "scanIntervalSeconds: 1\ngracePeriodSeconds: 2\ntimeoutMillis: 200\n");
    await().atMost(WAIT).until(() -> listener.lastIds().size() == 1);
    plc.close();
    long stopped = System.nanoTime();
    await().atMost(WAIT).until(() -> listener.last().orElseThrow().isEmpty());
    // The grace (2 s) runs from the last answer, at most one scan interval (1 s) before the stop.
    assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isGreaterThan(Duration.ofSeconds(1));
  }

  @Test
  void hostilePeersAreWarnedAboutOncePerReason() throws Exception {
    FakePeers.Peer garbage = peers.start(FakePeers.GARBAGE);
    FakePeers.Peer flood = peers.start(FakePeers.FLOOD);
    FakePeers.Peer silent = peers.start(FakePeers.SILENT);
    FakePeers.Peer good = peers.start(FakePeers.identifying(10, "Acme", "PC-1", "1.0"));
    ModbusHandler handler = new ModbusHandler();
    RecordingListener listener =
        start(
            handler,
            "addresses: [127.0.0.1]\n"
                + ports(garbage, flood, silent, good)
                + "unitIds: [1]\nscanIntervalSeconds: 1\ntimeoutMillis: 600\n");
    // Three scans, each meeting every hostile peer again.
    await()
        .atMost(WAIT)
        .until(() -> garbage.connections.get() >= 3 && silent.connections.get() >= 3);
    await().atMost(WAIT).until(() -> listener.snapshots().size() >= 1);
    assertThat(listener.lastIds()).containsExactly("tcp://127.0.0.1:" + good.port() + "/1");
    List<String> warnings =
        log.list.stream()
            .filter(e -> e.getLevel() == Level.WARN)
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    assertThat(warnings).hasSize(3);
    assertThat(warnings)
        .anySatisfy(w -> assertThat(w).contains(":" + garbage.port()).contains("malformed reply"))
        .anySatisfy(
            w -> assertThat(w).contains(":" + flood.port()).contains("transactions not asked"))
        .anySatisfy(w -> assertThat(w).contains(":" + silent.port()).contains("no reply"));
  }

  /** A transport that records where it is asked to connect and when; every address is empty. */
  private static final class RecordingTransport implements ModbusTransport {
    final List<InetSocketAddress> asked = new ArrayList<>();
    final List<Long> times = new ArrayList<>();
    final AtomicInteger closes = new AtomicInteger();

    @Override
    public synchronized CompletableFuture<List<Identity>> identify(
        InetSocketAddress address, Query query) {
      asked.add(address);
      times.add(System.nanoTime());
      return CompletableFuture.failedFuture(
          new ProbeException(new Failure(false, "unreachable", "refused")));
    }

    synchronized int count() {
      return asked.size();
    }

    @Override
    public void close() {
      closes.incrementAndGet();
    }
  }

  @Test
  void scanConnectsOnlyToListedAddressesAtTheRateLimit() throws Exception {
    RecordingTransport transport = new RecordingTransport();
    RecordingListener listener =
        start(
            new ModbusHandler(context -> transport),
            "addresses: [192.0.2.8/30, 198.51.100.7]\nports: [502, 1502]\nconnectionsPerSecond: 10\n");
    await().atMost(WAIT).until(() -> listener.last().isPresent());
    List<String> asked;
    List<Long> times;
    synchronized (transport) {
      asked = transport.asked.stream().map(a -> a.getHostString() + ":" + a.getPort()).toList();
      times = List.copyOf(transport.times);
    }
    assertThat(asked)
        .containsExactly(
            "192.0.2.8:502",
            "192.0.2.8:1502",
            "192.0.2.9:502",
            "192.0.2.9:1502",
            "192.0.2.10:502",
            "192.0.2.10:1502",
            "192.0.2.11:502",
            "192.0.2.11:1502",
            "198.51.100.7:502",
            "198.51.100.7:1502");
    // 10 connections at 10 per second: the last starts 0.9 s after the first.
    assertThat(Duration.ofNanos(times.get(9) - times.get(0)))
        .isGreaterThanOrEqualTo(Duration.ofMillis(850));
    assertThat(listener.last().orElseThrow()).isEmpty();
    assertThat(log.list).noneMatch(e -> e.getLevel() == Level.WARN);
  }

  @Test
  void nothingIsReportedAfterClose() throws Exception {
    RecordingTransport transport = new RecordingTransport();
    RecordingListener listener =
        start(
            new ModbusHandler(context -> transport),
            "addresses: [192.0.2.0/28]\nconnectionsPerSecond: 5\n");
    await().atMost(WAIT).until(() -> transport.count() >= 2);
    discoveries.get(0).close();
    int asked = transport.count();
    assertThat(transport.closes.get()).isEqualTo(1);
    await()
        .during(Duration.ofMillis(600))
        .atMost(Duration.ofSeconds(2))
        .until(() -> transport.count() == asked);
    assertThat(listener.snapshots()).isEmpty();
  }
}
