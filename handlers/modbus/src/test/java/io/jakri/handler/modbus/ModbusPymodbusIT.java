package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;

/**
 * The handler from the packaged plugin jar against a real Modbus TCP server (pymodbus, see {@link
 * ModbusPeers}) on loopback, started once for the class: discovered with its identity, updated when
 * the server comes back with another revision, removed when it stops. One discovery runs through
 * the ordered tests. Without pymodbus the tests are skipped, except when {@code CI=true}: then they
 * fail.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class ModbusPymodbusIT {

  private static final Duration WAIT = Duration.ofSeconds(30);

  private static ModbusPeers peers;
  private static ModbusPeers.Peer server;
  private static PluginJar plugin;
  private static Path pluginsDir;
  private static ScheduledExecutorService scheduler;
  private static Discovery discovery;
  private static Discovery filtered;
  private static RecordingListener listener;
  private static RecordingListener filteredListener;
  private static String id;

  @BeforeAll
  static void startPeer() throws Exception {
    try {
      peers = ModbusPeers.create();
    } catch (ModbusPeers.Unavailable e) {
      String message = "no pymodbus peer, modbus interop not tested: " + e.getMessage();
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
    }
    server = peers.start(0, "Acme Controls", "AC-100", "1.0", Optional.of("Boiler controller"));
    pluginsDir = Files.createTempDirectory("jakri-modbus-plugins-");
    plugin = PluginJar.loadPackaged(pluginsDir);
    scheduler = Executors.newScheduledThreadPool(2);
    id = "tcp://127.0.0.1:" + server.port() + "/1";
    String details =
        "addresses: [127.0.0.1]\nports: ["
            + server.port()
            + "]\nscanIntervalSeconds: 1\ngracePeriodSeconds: 2\ntimeoutMillis: 500\n";
    listener = new RecordingListener();
    discovery = handler().start(context("plcs", details), listener);
    filteredListener = new RecordingListener();
    filtered =
        handler()
            .start(
                context(
                    "plcs-other-vendor",
                    details + "vendor: {action: Include, items: [\"Bolt.*\"], match: Regex}\n"),
                filteredListener);
  }

  @AfterAll
  static void stopPeer() throws Exception {
    for (AutoCloseable c : new AutoCloseable[] {discovery, filtered}) {
      if (c != null) {
        c.close();
      }
    }
    if (plugin != null) {
      plugin.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (peers != null) {
      peers.close();
    }
    if (pluginsDir != null) {
      try (var files = Files.list(pluginsDir)) {
        for (Path p : files.toList()) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(pluginsDir);
    }
  }

  private static DiscoveryHandler handler() {
    return plugin.handler();
  }

  private static DiscoveryContext context(String configuration, String details) {
    return new DiscoveryContext(configuration, "node-it", details, Map.of(), scheduler);
  }

  private static Map<String, String> properties() {
    return listener.last().orElseThrow().get(0).properties();
  }

  @Test
  @Order(1)
  void serverIsDiscoveredWithItsIdentity() {
    await("device " + id)
        .atMost(WAIT)
        .until(() -> listener.last().isPresent() && listener.lastIds().contains(id));
    assertThat(listener.lastIds()).containsExactly(id);
    assertThat(listener.last().orElseThrow().get(0).shared()).isTrue();
    assertThat(properties())
        .containsEntry("MODBUS_HOST", "127.0.0.1")
        .containsEntry("MODBUS_PORT", Integer.toString(server.port()))
        .containsEntry("MODBUS_UNIT_ID", "1")
        .containsEntry("MODBUS_ENDPOINT", "tcp://127.0.0.1:" + server.port())
        .containsEntry("MODBUS_VENDOR", "Acme Controls")
        .containsEntry("MODBUS_PRODUCT_CODE", "AC-100")
        .containsEntry("MODBUS_REVISION", "1.0")
        .containsEntry("MODBUS_PRODUCT_NAME", "Boiler controller");
    await().atMost(WAIT).until(() -> filteredListener.last().isPresent());
    assertThat(filteredListener.last().orElseThrow()).isEmpty();
  }

  @Test
  @Order(2)
  void newRevisionUpdatesTheDevice() throws Exception {
    int port = server.port();
    server.close();
    server = peers.start(port, "Acme Controls", "AC-100", "2.1", Optional.empty());
    await("revision 2.1")
        .atMost(WAIT)
        .until(
            () ->
                listener.lastIds().equals(java.util.List.of(id))
                    && "2.1".equals(properties().get("MODBUS_REVISION")));
    assertThat(properties()).doesNotContainKey("MODBUS_PRODUCT_NAME");
  }

  @Test
  @Order(3)
  void stoppedServerIsRemovedAfterTheGrace() throws Exception {
    await().atMost(WAIT).until(() -> listener.lastIds().contains(id));
    server.close();
    long stopped = System.nanoTime();
    await("device gone").atMost(WAIT).until(() -> listener.last().orElseThrow().isEmpty());
    // The grace (2 s) runs from the last answer, at most one scan interval (1 s) before the stop.
    assertThat(Duration.ofNanos(System.nanoTime() - stopped)).isGreaterThan(Duration.ofSeconds(1));
  }
}
