package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.onvif.OnvifNetwork;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
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

  private static OnvifNetwork network;
  private static Path plugins;

  @TempDir Path root;
  private HandlerAgent agent;
  private OnvifNetwork.Camera camera;

  @BeforeAll
  static void setUp() throws IOException {
    plugins = HandlerAgent.plugins("onvif", "io/jakri/handler/onvif/OnvifHandler.class");
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
    agent = HandlerAgent.start(root, plugins, OFFLINE_GRACE);
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
    agent.writeConfiguration(
        name,
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
            .formatted(name, network.hostInterface));
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
    long healthyAt =
        agent.awaitFirst("advertised " + resource, resource, "Healthy", APPEAR).nanos();
    System.out.println(
        "ONVIF_AGENT_TIMING configuration_to_advertised_ms="
            + HandlerAgent.millis(start, healthyAt)
            + " (includes the agent picking the file up and the 1 s probe window)");
    assertThat(agent.agent().instances().list())
        .extracting(Instance::name)
        .containsExactly(instance);
    assertThat(agent.agent().instances().get(instance).orElseThrow().shared()).isTrue();

    Map<String, String> env = agent.admit(resource).container("c").envs();
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(env)
        .containsEntry("ONVIF_DEVICE_SERVICE_URL", serviceUrl)
        .containsEntry("ONVIF_DEVICE_SERVICE_URL_" + hash, serviceUrl)
        .containsEntry("ONVIF_DEVICE_UUID", uuid)
        .containsEntry("ONVIF_DEVICE_IP_ADDRESS", network.peerAddress)
        .containsEntry("ONVIF_DEVICE_MAC_ADDRESS_" + hash, "02:00:5e:00:53:10");

    long stopped = System.nanoTime();
    camera.close();
    long unhealthyAt = agent.awaitUnhealthy(resource, APPEAR).nanos();
    long endedAt = agent.awaitRetired(resource, instance, APPEAR);
    assertThat(agent.agent().instances().list()).isEmpty();
    assertThat(Duration.ofNanos(endedAt - unhealthyAt))
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "ONVIF_AGENT_REMOVAL unhealthy_ms="
            + HandlerAgent.millis(stopped, unhealthyAt)
            + " retired_ms="
            + HandlerAgent.millis(stopped, endedAt)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
