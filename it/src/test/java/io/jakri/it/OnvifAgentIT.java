package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceNames;
import io.jakri.handler.onvif.OnvifNetwork;
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
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent (standalone, kubelet emulated, the onvif plugin jar from {@code
 * agent/target/plugins}) against a camera stand-in in a network namespace ({@link OnvifNetwork}):
 * camera → Instance with Akri's name → device plugin → kubelet → container env; then the camera
 * stops: Unhealthy, and gone after the offline grace. Without root/iproute2/python3 the tests are
 * skipped, except when {@code CI=true}: then they fail.
 */
class OnvifAgentIT {

  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final Duration OFFLINE_GRACE = Duration.ofSeconds(3);
  private static final String NODE = "node-it";

  private static OnvifNetwork network;
  private static Path plugins;

  @TempDir Path root;
  private Agent agent;
  private KubeletEmulator kubelet;
  private final Events events = new Events();
  private OnvifNetwork.Camera camera;

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
  static void setUp() {
    String dir = System.getProperty("jakri.plugins.dir");
    assertThat(dir).as("system property jakri.plugins.dir (set by the it pom)").isNotNull();
    plugins = Path.of(dir).toAbsolutePath().normalize();
    assertThat(plugins.resolve("jakri-handler-onvif.jar"))
        .as("onvif plugin jar; build the agent module first")
        .exists();
    network = OnvifNetwork.startOrSkip("ip", "python3");
  }

  @AfterAll
  static void tearDown() {
    if (network != null) {
      network.close();
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
  void stopAll() {
    if (camera != null) {
      camera.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  private void configure(String name) throws IOException {
    String yaml =
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: onvif
            discoveryDetails: |
              ipAddresses: {action: Exclude, items: []}
              macAddresses: {action: Exclude, items: []}
              scopes: {action: Exclude, items: []}
              uuids: {action: Exclude, items: []}
              discoveryTimeoutSeconds: 1
              discoveryIntervalSeconds: 1
              interfaces: [%s]
            discoveryProperties:
              - name: username_default
                value: admin
              - name: password_default
                value: "cam pass"
        """
            .formatted(name, network.hostInterface);
    Path dir = root.resolve("config");
    Path tmp = dir.resolve("." + name + ".yaml.tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void cameraBecomesAnInstanceWithAkrisNameAndPodEnvThenLeavesAfterTheGrace() throws Exception {
    String uuid = UUID.randomUUID().toString();
    camera =
        network.camera(
            uuid, "--username", "admin", "--password", "cam pass", "--mac", "02:00:5e:00:53:10");
    String serviceUrl = camera.serviceUrl(network.peerAddress);
    String configuration = "onvif-cams";
    String instance =
        InstanceNames.instanceName(configuration, serviceUrl + "-" + uuid, true, "unused");
    String resource = "akri.sh/" + instance;

    long start = System.nanoTime();
    configure(configuration);
    await("advertised " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(5))
        .until(() -> events.first(resource, "Healthy").isPresent());
    System.out.println(
        "ONVIF_AGENT_TIMING configuration_to_advertised_ms="
            + TimeUnit.NANOSECONDS.toMillis(
                events.first(resource, "Healthy").orElseThrow().nanos() - start)
            + " (includes the agent picking the file up and the 1 s probe window)");
    assertThat(agent.instances().list()).extracting(Instance::name).containsExactly(instance);
    assertThat(agent.instances().get(instance).orElseThrow().shared()).isTrue();

    Map<String, String> env =
        kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1))).container("c").envs();
    String hash = instance.substring(instance.length() - 6).toUpperCase(Locale.ROOT);
    assertThat(env)
        .containsEntry("ONVIF_DEVICE_SERVICE_URL", serviceUrl)
        .containsEntry("ONVIF_DEVICE_SERVICE_URL_" + hash, serviceUrl)
        .containsEntry("ONVIF_DEVICE_UUID", uuid)
        .containsEntry("ONVIF_DEVICE_IP_ADDRESS", network.peerAddress)
        .containsEntry("ONVIF_DEVICE_MAC_ADDRESS_" + hash, "02:00:5e:00:53:10");

    long stopped = System.nanoTime();
    camera.close();
    await("unhealthy " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> events.first(resource, "Unhealthy").isPresent());
    await("retirement of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                !agent.devicePlugins().served().contains(resource)
                    && agent.instances().list().isEmpty());
    await().atMost(APPEAR).until(() -> events.streamEndedAt.containsKey(resource));
    long unhealthyAt = events.first(resource, "Unhealthy").orElseThrow().nanos();
    long endedAt = events.streamEndedAt.get(resource);
    assertThat(Duration.ofNanos(endedAt - unhealthyAt))
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "ONVIF_AGENT_REMOVAL unhealthy_ms="
            + TimeUnit.NANOSECONDS.toMillis(unhealthyAt - stopped)
            + " retired_ms="
            + TimeUnit.NANOSECONDS.toMillis(endedAt - stopped)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
