package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceNames;
import io.jakri.handler.opcua.OpcuaPeers;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent (standalone, kubelet emulated, the opcua plugin jar from {@code
 * agent/target/plugins}) against real node-opcua servers ({@link OpcuaPeers} from the opcua
 * handler's test-jar): Akri's OPC UA Configuration → FindServers → Instance → device plugin →
 * kubelet → container env, and back out when the server stops.
 *
 * <p>Without node or the node-opcua modules the tests are skipped, except when {@code CI=true}:
 * then they fail. Each test runs its own agent in a temp dir; the peers run once for the class.
 */
class OpcuaAgentIT {

  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final Duration OFFLINE_GRACE = Duration.ofSeconds(3);
  private static final String NODE = "node-it";
  private static final String OPCUA_HANDLER_CLASS = "io/jakri/handler/opcua/OpcuaHandler.class";

  private static OpcuaPeers peers;
  private static OpcuaPeers.Peer lds;
  private static OpcuaPeers.Peer plc;
  private static Path plugins;

  @TempDir Path root;
  private Agent agent;
  private KubeletEmulator kubelet;
  private final Events events = new Events();

  /** What the emulated kubelet saw, with {@link System#nanoTime()} stamps. Thread-safe. */
  private static final class Events implements EmulatorListener {
    record Snapshot(String resource, Map<String, String> devices, long nanos) {}

    final List<Snapshot> snapshots = new CopyOnWriteArrayList<>();
    final Map<String, Long> streamEndedAt = new ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      snapshots.add(new Snapshot(resource, Map.copyOf(devices), System.nanoTime()));
    }

    @Override
    public void streamEnded(String resource) {
      streamEndedAt.putIfAbsent(resource, System.nanoTime());
    }

    Optional<Snapshot> first(String resource, String health) {
      return snapshots.stream()
          .filter(s -> s.resource().equals(resource))
          .filter(s -> s.devices().containsValue(health))
          .findFirst();
    }
  }

  @BeforeAll
  static void startPeers() throws Exception {
    String dir = System.getProperty("jakri.plugins.dir");
    assertThat(dir).as("system property jakri.plugins.dir (set by the it pom)").isNotNull();
    plugins = Path.of(dir).toAbsolutePath().normalize();
    Path opcuaJar = plugins.resolve("jakri-handler-opcua.jar");
    assertThat(opcuaJar).as("opcua plugin jar; build the agent module first").exists();
    try (ZipFile jar = new ZipFile(opcuaJar.toFile())) {
      assertThat(jar.getEntry(OPCUA_HANDLER_CLASS))
          .as("%s holds the opcua handler (a stale jar? rebuild the agent module)", opcuaJar)
          .isNotNull();
    }
    try {
      peers = OpcuaPeers.create();
      lds = peers.lds("it-lds");
      peers.awaitReady(lds);
      plc = peers.server("Boiler 1", Optional.empty(), Optional.of(lds));
      peers.awaitReady(plc);
    } catch (OpcuaPeers.Unavailable e) {
      String message = "no node-opcua peers, opcua agent IT not run: " + e.getMessage();
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
    }
  }

  @AfterAll
  static void stopPeers() {
    if (peers != null) {
      peers.close();
    }
  }

  @BeforeEach
  void startAgent() throws IOException {
    Files.createDirectories(root.resolve("config"));
    agent =
        Agent.start(
            new AgentOptions(
                NODE,
                true,
                Optional.of(root.resolve("config")),
                true,
                root.resolve("device-plugins"),
                root.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                OFFLINE_GRACE));
    kubelet = agent.emulator().orElseThrow();
    kubelet.addListener(events);
  }

  @AfterEach
  void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  /** Akri's OPC UA Configuration (its Helm chart's details), polling every second. */
  private void configure(String name, String discoveryUrl) throws IOException {
    String yaml =
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: opcua
            discoveryDetails: |+
              opcuaDiscoveryMethod:
                standard:
                  discoveryUrls:
                  - %s
              applicationNames:
                action: Exclude
                items: []
              pollIntervalSeconds: 1
          brokerProperties:
            IDENTIFIER: "Thermometer_Temperature"
            NAMESPACE_INDEX: "2"
        """
            .formatted(name, discoveryUrl);
    Path dir = root.resolve("config");
    Path tmp = dir.resolve("." + name + ".yaml.tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** The Instance name the agent gives a server: shared device, id = its discovery URL. */
  private static String instanceOf(String configuration, String url) {
    return InstanceNames.instanceName(configuration, url, true, "unused-for-shared");
  }

  private void awaitAdvertised(String resource) {
    await("capacity and allocatable 1 of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                kubelet.capacity().getOrDefault(resource, -1L) == 1
                    && kubelet.allocatable().getOrDefault(resource, -1L) == 1);
  }

  @Test
  void serverRegisteredWithTheLdsBecomesAnInstanceWhosePodGetsItsDiscoveryUrl() throws Exception {
    String configuration = "opcua-env";
    configure(configuration, lds.url());
    String url = plc.advertisedUrl();
    String instance = instanceOf(configuration, url);
    String resource = "akri.sh/" + instance;
    assertThat(resource).matches("akri\\.sh/opcua-env-[0-9a-f]{6}");

    awaitAdvertised(resource);
    assertThat(kubelet.devices(resource)).containsExactly(Map.entry(instance + "-0", "Healthy"));
    // The LDS itself is never a device: one Instance only.
    assertThat(agent.instances().list()).extracting(Instance::name).containsExactly(instance);

    Map<String, String> env =
        kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1))).container("c").envs();
    String hash = instance.substring(instance.length() - 6).toUpperCase(Locale.ROOT);
    assertThat(env)
        .containsEntry("OPCUA_DISCOVERY_URL", url)
        .containsEntry("OPCUA_DISCOVERY_URL_" + hash, url)
        .containsEntry("IDENTIFIER", "Thermometer_Temperature")
        .containsEntry("NAMESPACE_INDEX", "2");
  }

  @Test
  void stoppedServerTurnsUnhealthyAtTheNextPollThenItsInstanceLeavesAfterTheOfflineGrace()
      throws Exception {
    OpcuaPeers.Peer leaving = peers.server("leaving", Optional.empty(), Optional.empty());
    peers.awaitReady(leaving);
    String configuration = "opcua-leave";
    configure(configuration, leaving.url());
    String instance = instanceOf(configuration, leaving.advertisedUrl());
    String resource = "akri.sh/" + instance;
    awaitAdvertised(resource);

    long stopped = System.nanoTime();
    leaving.kill();
    await("unhealthy snapshot of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> events.first(resource, "Unhealthy").isPresent());
    assertThat(events.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    await("retirement of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> events.streamEndedAt.containsKey(resource));
    await("Instance " + instance + " deleted")
        .atMost(APPEAR)
        .until(() -> agent.instances().list().isEmpty());
    long unhealthyMs =
        TimeUnit.NANOSECONDS.toMillis(
            events.first(resource, "Unhealthy").orElseThrow().nanos() - stopped);
    long retiredMs = TimeUnit.NANOSECONDS.toMillis(events.streamEndedAt.get(resource) - stopped);
    System.out.println(
        "OPCUA_AGENT_REMOVAL unhealthy_ms="
            + unhealthyMs
            + " retired_ms="
            + retiredMs
            + " poll_interval_ms=1000 offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
    assertThat(retiredMs).isGreaterThanOrEqualTo(OFFLINE_GRACE.toMillis());
  }
}
