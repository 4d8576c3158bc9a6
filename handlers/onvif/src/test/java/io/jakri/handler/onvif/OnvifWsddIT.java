package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The WS-Discovery layer against a real, independent responder: Debian's {@code wsdd} in a network
 * namespace behind a veth pair (IPv4 multicast across it). wsdd answers probes for {@code
 * wsdp:Device} only, so the handler's probe type is set to that. Its ProbeMatch carries no {@code
 * XAddrs}, so the handler resolves the endpoint (a multicast Resolve) and reads wsdd's
 * ResolveMatch. wsdd is no camera: its HTTP endpoint refuses ONVIF's {@code GetSystemDateAndTime},
 * so Akri's responsiveness check rightly keeps it out of the snapshot; that the check reaches
 * wsdd's own {@code XAddrs} path (which holds its UUID) proves the probe went out, wsdd's
 * ProbeMatches came back and were read. Without root, iproute2 or wsdd the tests are skipped,
 * except when {@code CI=true}: then they fail.
 */
class OnvifWsddIT {

  private static final String DEVPROF =
      "probeType: {prefix: wsdp, namespace: \"http://schemas.xmlsoap.org/ws/2006/02/devprof\","
          + " name: Device}\n";

  private static OnvifNetwork network;
  private static OnvifNetwork.Peer wsdd;
  private static final String WSDD_UUID = UUID.randomUUID().toString();
  private static PluginJar plugin;
  private static Path pluginsDir;
  private static ScheduledExecutorService scheduler;

  @BeforeAll
  static void setUp() throws Exception {
    network = OnvifNetwork.startOrSkip("ip", "wsdd");
    wsdd =
        network.spawn(
            "wsdd",
            "-i",
            network.peerInterface,
            "-4",
            "-v",
            "-v",
            "-U",
            WSDD_UUID,
            "-n",
            "jakri-wsdd");
    // wsdd announces itself (Hello) once its sockets are up.
    wsdd.await(Pattern.compile("(?i)(hello|scheduling)"), Duration.ofSeconds(20));
    pluginsDir = Files.createTempDirectory("jakri-onvif-wsdd-plugins-");
    plugin = PluginJar.loadPackaged(pluginsDir);
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (plugin != null) {
      plugin.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (network != null) {
      network.close();
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

  private static long postsToWsdd() {
    return wsdd.output()
        .lines()
        .filter(l -> l.contains("POST /" + WSDD_UUID) && l.contains(network.hostAddress))
        .count();
  }

  @Test
  void wsddAnswersTheConfiguredProbeTypeAndItsAddressIsChecked() throws Exception {
    long bareNanos =
        BareClient.firstProbeMatch(network.hostInterface, "wsdp:Device", Duration.ofSeconds(5));
    assertThat(bareNanos).as("wsdd answers a bare probe for wsdp:Device").isPositive();

    long before = postsToWsdd();
    RecordingListener listener = new RecordingListener();
    long start = System.nanoTime();
    try (Discovery d =
        plugin
            .handler()
            .start(
                new DiscoveryContext(
                    "wsdd",
                    "node-it",
                    DEVPROF + "interfaces: [" + network.hostInterface + "]",
                    Map.of(),
                    scheduler),
                listener)) {
      await("the handler reaches wsdd's XAddrs")
          .atMost(Duration.ofSeconds(20))
          .pollInterval(Duration.ofMillis(5))
          .until(() -> postsToWsdd() > before);
      long handlerMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
      System.out.println(
          "ONVIF_TIMING wsdd probe->XAddrs contacted="
              + handlerMs
              + " ms (discoveryTimeoutSeconds=1 collects for 1000 ms) floor="
              + TimeUnit.NANOSECONDS.toMillis(bareNanos)
              + " ms (bare JDK probe -> first ProbeMatch)");
      await().atMost(Duration.ofSeconds(20)).until(() -> !listener.snapshots().isEmpty());
      assertThat(listener.lastIds()).as("wsdd is not an ONVIF camera").isEmpty();
      assertThat(handlerMs).isGreaterThanOrEqualTo(1000);
    }
    assertThat(wsdd.output()).contains("POST /" + WSDD_UUID).contains(" 400 ");
  }

  @Test
  void akrisDefaultProbeTypeIsNotAnsweredByWsdd() throws Exception {
    long before = postsToWsdd();
    RecordingListener listener = new RecordingListener();
    try (Discovery d =
        plugin
            .handler()
            .start(
                new DiscoveryContext(
                    "wsdd-nvt",
                    "node-it",
                    "interfaces: [" + network.hostInterface + "]",
                    Map.of(),
                    scheduler),
                listener)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> !listener.snapshots().isEmpty());
      assertThat(listener.lastIds()).isEmpty();
      await("wsdd logs the probe it ignored")
          .atMost(Duration.ofSeconds(10))
          .until(() -> wsdd.output().contains("netwsdl:NetworkVideoTransmitter"));
    }
    assertThat(postsToWsdd()).isEqualTo(before);
  }
}
