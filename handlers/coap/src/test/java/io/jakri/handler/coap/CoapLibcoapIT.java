package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The handler from the packaged plugin jar against real libcoap peers ({@link CoapPeers}): unicast
 * on loopback, multicast (IPv4 and IPv6) into network namespaces. Without the peers the tests are
 * skipped, except when {@code CI=true}: then they fail. Peers shared by several tests are started
 * once per class; those a test stops are its own.
 */
class CoapLibcoapIT {

  private static final Logger LOG = LoggerFactory.getLogger(CoapLibcoapIT.class);
  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final String FAST =
      "discoveryIntervalSeconds: 1\nresponseTimeoutMillis: 300\ngracePeriodSeconds: 2\n";
  // libcoap delays answers to a multicast request by up to 5 s (RFC 7252 DEFAULT_LEISURE).
  private static final String MULTICAST =
      "discoveryIntervalSeconds: 1\nresponseTimeoutMillis: 5500\ngracePeriodSeconds: 2\n";

  private static CoapPeers peers;
  private static PluginJar plugin;
  private static Path pluginsDir;
  private static ScheduledExecutorService scheduler;
  private static CoapPeers.Namespace ns4;
  private static CoapPeers.Namespace ns6;
  private static CoapPeers.Peer multicast4;
  private static CoapPeers.Peer multicast6;

  private final List<AutoCloseable> cleanUp = new ArrayList<>();

  @BeforeAll
  static void startPeers() throws Exception {
    try {
      peers = CoapPeers.start();
      ns4 = peers.namespace();
      ns6 = peers.namespace();
    } catch (CoapPeers.Unavailable e) {
      String message = "no libcoap peers, coap interop not tested: " + e.getMessage();
      if (peers != null) {
        peers.close();
        peers = null;
      }
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
    }
    multicast4 = peers.multicastServer(ns4, UdpProber.GROUP4);
    multicast6 = peers.multicastServer(ns6, UdpProber.GROUP6);
    pluginsDir = Files.createTempDirectory("jakri-coap-plugins-");
    plugin = PluginJar.loadPackaged(pluginsDir);
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void stopPeers() throws Exception {
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

  @AfterEach
  void closeAll() throws Exception {
    for (int i = cleanUp.size() - 1; i >= 0; i--) {
      cleanUp.get(i).close();
    }
  }

  private RecordingListener discover(String configuration, String details) throws Exception {
    RecordingListener listener = new RecordingListener();
    Discovery discovery =
        plugin
            .handler()
            .start(
                new DiscoveryContext(configuration, "node-it", details, Map.of(), scheduler),
                listener);
    cleanUp.add(discovery);
    return listener;
  }

  private static Optional<DiscoveredDevice> device(RecordingListener listener, String id) {
    return listener.last().orElse(List.of()).stream().filter(d -> d.id().equals(id)).findFirst();
  }

  private static Map<String, String> awaitDevice(RecordingListener listener, String id) {
    await("device " + id)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> device(listener, id).isPresent());
    return device(listener, id).orElseThrow().properties();
  }

  @Test
  void unicastServersAreDiscoveredUpdatedAndRemoved() throws Exception {
    int[] ports = CoapPeers.freePorts(2);
    int portA = ports[0];
    int portB = ports[1];
    CoapPeers.Peer a = peers.loopbackServer(portA);
    cleanUp.add(a);
    String hosts = "hosts: [\"127.0.0.1:" + portA + "\", \"127.0.0.1:" + portB + "\"]\n";
    RecordingListener all = discover("unicast", "multicast: false\n" + hosts + FAST);
    RecordingListener rd =
        discover("unicast-rd", "multicast: false\nrt: [core.rd]\n" + hosts + FAST);
    String idA = "127.0.0.1:" + portA;
    String idB = "127.0.0.1:" + portB;

    Map<String, String> first = awaitDevice(all, idA);
    assertThat(first)
        .containsEntry("COAP_ENDPOINT", "coap://127.0.0.1:" + portA)
        .containsEntry("COAP_HOST", "127.0.0.1")
        .containsEntry("COAP_PORT", "" + portA)
        .containsEntry("COAP_LINK_COUNT", "4")
        .containsEntry("COAP_RESOURCE_TYPES", "ticks");
    assertThat(first.get("COAP_LINKS")).isEqualTo("/,/time;rt=ticks;if=clock,/async,/example_data");
    assertThat(device(all, idA).orElseThrow().shared()).isTrue();

    // update 1: a second server with other resources
    CoapPeers.Peer b = peers.loopbackResourceDirectory(portB);
    cleanUp.add(b);
    assertThat(awaitDevice(all, idB)).containsEntry("COAP_LINKS", "/rd;rt=core.rd");
    assertThat(awaitDevice(rd, idB)).containsEntry("COAP_RESOURCE_TYPES", "core.rd");
    assertThat(rd.snapshots())
        .allSatisfy(s -> assertThat(s).extracting(DiscoveredDevice::id).isSubsetOf(idB));

    // update 2: a resource created on the first server shows in its links
    assertThat(peers.put("coap://127.0.0.1:" + portA + "/dyn", "x")).doesNotContain("4.");
    await("the new resource")
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                device(all, idA)
                    .map(d -> d.properties().get("COAP_LINKS"))
                    .orElse("")
                    .contains("/dyn"));
    assertThat(device(all, idA).orElseThrow().properties()).containsEntry("COAP_LINK_COUNT", "5");

    // remove: the first server stops; it leaves after the grace, the other stays
    long stopped = System.nanoTime();
    a.close();
    await("removal of " + idA)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> device(all, idA).isEmpty());
    LOG.info(
        "COAP_REMOVAL handler={} ms after coap-server stopped (grace 2 s, rounds every 1 s)",
        TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped));
    assertThat(all.lastIds()).containsExactly(idB);
    assertThat(all.failures()).isEmpty();
  }

  @Test
  void multicastReachesServersInNamespacesOverIpv4AndIpv6() throws Exception {
    String where = "networkInterfaces: [" + ns4.hostInterface + ", " + ns6.hostInterface + "]\n";
    RecordingListener both = discover("multicast", where + MULTICAST);
    RecordingListener v4only = discover("multicast-v4", where + "ipv6: false\n" + MULTICAST);
    RecordingListener clock = discover("multicast-if", where + "if: [clock]\n" + MULTICAST);
    String id4 = ns4.peerAddress + ":5683";
    String id6 = "[fe80:0:0:0:0:0:a:2%" + ns6.hostInterface + "]:5683";

    assertThat(awaitDevice(both, id4))
        .containsEntry("COAP_ENDPOINT", "coap://" + id4)
        .containsEntry("COAP_RESOURCE_TYPES", "ticks");
    assertThat(awaitDevice(both, id6))
        .containsEntry(
            "COAP_ENDPOINT", "coap://[fe80:0:0:0:0:0:a:2%25" + ns6.hostInterface + "]:5683");
    assertThat(awaitDevice(clock, id4)).containsEntry("COAP_LINKS", "/time;rt=ticks;if=clock");
    awaitDevice(v4only, id4);
    // The v4-only discovery has had as many rounds as the other one: no IPv6 endpoint in any.
    awaitDevice(clock, id6);
    assertThat(v4only.snapshots())
        .allSatisfy(s -> assertThat(s).extracting(DiscoveredDevice::id).containsOnly(id4));
    //
    assertThat(both.failures()).isEmpty();
  }

  @Test
  void multicastServerThatStopsIsRemoved() throws Exception {
    CoapPeers.Namespace ns = peers.namespace();
    CoapPeers.Peer server = peers.multicastServer(ns, UdpProber.GROUP4);
    cleanUp.add(server);
    RecordingListener listener =
        discover(
            "multicast-leave",
            "networkInterfaces: [" + ns.hostInterface + "]\nipv6: false\n" + MULTICAST);
    String id = ns.peerAddress + ":5683";
    awaitDevice(listener, id);
    server.close();
    await("removal of " + id)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> device(listener, id).isEmpty());
    assertThat(listener.lastIds()).isEmpty();
  }

  @Test
  void serverUpToDeviceReportedNextToCoapClientsFirstAnswer() throws Exception {
    int port = CoapPeers.freePort();
    String id = "127.0.0.1:" + port;
    RecordingListener listener =
        discover("timing", "multicast: false\nhosts: [\"" + id + "\"]\n" + FAST);
    // Both observers run before the server starts: the handler's rounds, and coap-client in a loop.
    CoapPeers.Peer server = peers.spawn(CoapPeers.SERVER, "-A", "127.0.0.1", "-p", "" + port);
    cleanUp.add(server);
    long[] clientSaw = {0};
    long[] handlerSaw = {0};
    await()
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(1))
        .until(
            () -> {
              if (handlerSaw[0] == 0 && device(listener, id).isPresent()) {
                handlerSaw[0] = System.nanoTime();
              }
              if (clientSaw[0] == 0
                  && peers.get("coap://" + id + "/.well-known/core").contains("</")) {
                clientSaw[0] = System.nanoTime();
              }
              return handlerSaw[0] != 0 && clientSaw[0] != 0;
            });
    long handlerMs = TimeUnit.NANOSECONDS.toMillis(handlerSaw[0] - server.startedNanos);
    long clientMs = TimeUnit.NANOSECONDS.toMillis(clientSaw[0] - server.startedNanos);
    String timing =
        "COAP_TIMING handler="
            + handlerMs
            + " ms coap-client="
            + clientMs
            + " ms (rounds every 1 s)";
    LOG.info(timing);
    System.out.println(timing);
  }
}
