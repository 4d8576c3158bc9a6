package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.model.EnvContractTest;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StandaloneAgentIT {

  @TempDir Path tmp;
  private TestAgent agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  private static final String DEBUG_ECHO =
      """
      apiVersion: akri.sh/v0
      kind: Configuration
      metadata:
        name: akri-debug-echo-foo
      spec:
        capacity: 2
        discoveryHandler:
          name: debugEcho
          discoveryDetails: |
            descriptions: [foo0, foo1]
            shared: true
        brokerProperties:
          GREETING: hi
          DEBUG_ECHO_DESCRIPTION: overridden-by-broker
      """;

  private static final String SPOOKD =
      """
      apiVersion: akri.sh/v0
      kind: Configuration
      metadata:
        name: spookd
      spec:
        discoveryHandler:
          name: static
          discoveryDetails: |
            deviceMapping:
              - hosts: [minikube]
                devices:
                  - resourceName: example.com/widget
                    instanceID: "0001"
                    env:
                      IP: 192.168.0.200
                      PORT: "12345"
                  - resourceName: example.com/thingamajig
                    instanceID: A1234
      """;

  @Test
  void sharedDebugEchoDeviceIsServedAsAkriNamedInstanceOnItsOwnSocket() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo-8120fe", 2);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo", 4);
    assertThat(agent.kubelet().devices("akri.sh/akri-debug-echo-foo-8120fe"))
        .containsOnlyKeys("akri-debug-echo-foo-8120fe-0", "akri-debug-echo-foo-8120fe-1")
        .containsValues("Healthy");
    try (Stream<Path> files = Files.list(agent.devicePluginDir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .anyMatch(n -> n.matches("akri-debug-echo-foo-8120fe-\\d{10}\\.sock"));
    }
    Instance instance = agent.agent.instances().get("akri-debug-echo-foo-8120fe").orElseThrow();
    assertThat(instance.shared()).isTrue();
    assertThat(instance.nodes()).containsExactly("node-a");
    assertThat(instance.configurationName()).isEqualTo("akri-debug-echo-foo");
  }

  @Test
  void allocatingAnInstanceGivesPropertiesWithHashAndClaimsTheSlot() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo-8120fe", 2);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo", 4);

    PodAdmission pod =
        agent
            .kubelet()
            .admit(
                Pod.of(
                    "default",
                    "broker",
                    Container.of("c", "akri.sh/akri-debug-echo-foo-8120fe", 1)));
    ContainerAllocation c = pod.container("c");
    assertThat(c.envs())
        .containsEntry("DEBUG_ECHO_DESCRIPTION", "overridden-by-broker")
        .containsEntry("DEBUG_ECHO_DESCRIPTION_8120FE", "overridden-by-broker")
        .containsEntry("GREETING", "hi")
        .containsEntry("GREETING_8120FE", "hi");
    String slot = c.deviceIds("akri.sh/akri-debug-echo-foo-8120fe").get(0);
    Instance instance = agent.agent.instances().get("akri-debug-echo-foo-8120fe").orElseThrow();
    assertThat(instance.deviceUsage().get(slot)).isEqualTo(new SlotUsage.NodeUse("node-a"));
    // The class resource no longer offers the slot taken through the Instance resource.
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo", 3);
    assertThat(agent.kubelet().devices("akri.sh/akri-debug-echo-foo")).doesNotContainKey(slot);
  }

  @Test
  void spookdWalkthroughGivesTheSeedsEnvListingVerbatim() throws Exception {
    agent = TestAgent.start(tmp, "minikube", Duration.ofSeconds(60), true);
    agent.writeConfig("spookd.yaml", SPOOKD);
    agent.awaitCapacity("example.com/widget", 1);
    agent.awaitCapacity("example.com/thingamajig", 1);

    PodAdmission pod =
        agent
            .kubelet()
            .admit(
                Pod.of(
                    "default",
                    "spookd-test",
                    Container.of(
                        "test", Map.of("example.com/widget", 1L, "example.com/thingamajig", 1L))));
    List<String> lines = new ArrayList<>();
    new TreeMap<>(pod.container("test").envs()).forEach((k, v) -> lines.add(k + "=" + v));
    assertThat(lines).containsExactlyElementsOf(EnvContractTest.spookdSeedEnvLines());

    // Only one widget: a second pod asking for one is refused as Insufficient.
    agent.awaitAllocatable("example.com/widget", 1);
    assertThatThrownBy(
            () ->
                agent
                    .kubelet()
                    .admit(Pod.of("default", "second", Container.of("t", "example.com/widget", 1))))
        .isInstanceOf(AdmissionException.class)
        .hasMessageContaining("example.com/widget");
  }

  @Test
  void editingTheStaticMappingChangesWhatIsAdvertisedWithoutARestart() throws Exception {
    agent = TestAgent.start(tmp, "minikube", Duration.ofSeconds(1), true);
    agent.writeConfig("spookd.yaml", SPOOKD);
    agent.awaitCapacity("example.com/widget", 1);
    String more =
        SPOOKD.replace(
            "            - resourceName: example.com/thingamajig\n",
            "            - resourceName: example.com/widget\n"
                + "              instanceID: \"0002\"\n"
                + "            - resourceName: example.com/thingamajig\n");
    assertThat(more).isNotEqualTo(SPOOKD);
    agent.writeConfig("spookd.yaml", more);
    agent.awaitCapacity("example.com/widget", 2);
    agent.writeConfig("spookd.yaml", SPOOKD.replace("hosts: [minikube]", "hosts: [elsewhere]"));
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> !agent.agent.devicePlugins().served().contains("example.com/widget"));
  }

  @Test
  void classResourcePrefersDistinctInstances() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig(
        "widgets.yaml",
        TestAgent.configuration(
            "widgets",
            "simulated",
            3,
            "count: 2\nresourceName: example.com/widget\nshared: true\nenvPrefix: SIMPLE_DEVICE"));
    agent.awaitCapacity("example.com/widget", 6);
    PodAdmission pod =
        agent.kubelet().admit(Pod.of("default", "two", Container.of("c", "example.com/widget", 2)));
    List<String> ids = pod.container("c").deviceIds("example.com/widget");
    assertThat(ids).hasSize(2);
    assertThat(ids.stream().map(i -> i.substring(0, i.lastIndexOf('-'))).distinct()).hasSize(2);
    // Two distinct devices: each one's envPrefix env var (named after its device id).
    assertThat(pod.container("c").envs())
        .containsEntry("EXAMPLECOM_WIDGET_NUM_DEVICES", "2")
        .containsEntry("SIMPLE_DEVICE_simple-device-node-a-0", "/dev/0")
        .containsEntry("SIMPLE_DEVICE_simple-device-node-a-1", "/dev/1")
        .satisfies(env -> assertThat(env).doesNotContainKey("EXAMPLECOM_WIDGET_DEV2_ID"));
    for (String id : ids) {
      String instance = id.substring(0, id.lastIndexOf('-'));
      assertThat(agent.agent.instances().get(instance).orElseThrow().deviceUsage().get(id))
          .isEqualTo(new SlotUsage.ClassUse(id, "node-a"));
    }
  }

  @Test
  void kubeletRestartIsFollowedByEveryResourceRegisteredAgain() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo", 4);
    Set<String> before = agent.agent.devicePlugins().served();
    KubeletEmulator kubelet = agent.kubelet();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> kubelet.registeredResources().containsAll(before));
    long registrations = kubelet.registrations();

    long start = System.nanoTime();
    kubelet.restart();
    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                kubelet.registeredResources().containsAll(before)
                    && before.stream()
                        .allMatch(r -> kubelet.allocatable().getOrDefault(r, 0L) > 0));
    long millis = (System.nanoTime() - start) / 1_000_000;
    System.out.println("KUBELET_RESTART_RECOVERY resources=" + before.size() + " ms=" + millis);
    assertThat(kubelet.registrations()).isGreaterThanOrEqualTo(registrations + before.size());
    // Every socket the agent serves exists again.
    for (String resource : before) {
      assertThat(agent.agent.devicePlugins().socketOf(resource))
          .get()
          .satisfies(p -> assertThat(p).exists());
    }
  }

  @Test
  void editingAConfigurationChangesCapacityAndDeletingItRetiresEverything() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo-8120fe", 2);
    agent.writeConfig("echo.yaml", DEBUG_ECHO.replace("capacity: 2", "capacity: 3"));
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo-8120fe", 3);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo", 6);

    agent.deleteConfig("echo.yaml");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> agent.agent.devicePlugins().served().isEmpty());
    agent.awaitAllocatable("akri.sh/akri-debug-echo-foo-8120fe", 0);
    assertThat(agent.agent.instances().list()).isEmpty();
    try (Stream<Path> files = Files.list(agent.devicePluginDir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .allMatch(n -> n.equals("kubelet.sock") || n.startsWith("kubelet_internal_checkpoint"));
    }
  }

  @Test
  void vanishedDeviceTurnsUnhealthyAtOnceAndLeavesAfterTheGracePeriod() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(2), true);
    agent.writeConfig(
        "sim.yaml", TestAgent.configuration("sim", "simulated", 1, "count: 2\nidPrefix: dev"));
    String first = "akri.sh/" + instanceName("sim", "dev-node-a-1", "node-a");
    agent.awaitCapacity(first, 1);
    agent.awaitAllocatable(first, 1);

    agent.writeConfig(
        "sim.yaml", TestAgent.configuration("sim", "simulated", 1, "count: 1\nidPrefix: dev"));
    agent.awaitAllocatable(first, 0);
    assertThat(agent.kubelet().capacity()).containsEntry(first, 1L);
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> !agent.agent.devicePlugins().served().contains(first));
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> agent.agent.instances().get(first.substring("akri.sh/".length())).isEmpty());
  }

  @Test
  void badConfigurationsAndUnknownHandlersDoNotStopTheGoodOnes() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), true);
    agent.writeConfig("broken.yaml", "kind: Configuration\nmetadata: [oops\n");
    agent.writeConfig(
        "unknown.yaml", TestAgent.configuration("nobody", "no-such-handler", 1, "x: 1"));
    agent.writeConfig(
        "badDetails.yaml", TestAgent.configuration("bad-details", "simulated", 1, "count: many"));
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    agent.awaitCapacity("akri.sh/akri-debug-echo-foo-8120fe", 2);
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              var statuses = agent.agent.discovery().statuses();
              assertThat(statuses.get("nobody").state())
                  .isEqualTo(io.jakri.agent.discovery.DiscoveryManager.State.HANDLER_MISSING);
              assertThat(statuses.get("bad-details").state())
                  .isEqualTo(io.jakri.agent.discovery.DiscoveryManager.State.INVALID);
              assertThat(statuses.get("bad-details").message()).contains("count");
            });
  }

  @Test
  void registrationIsRetriedUntilTheKubeletAppears() throws Exception {
    agent = TestAgent.start(tmp, "node-a", Duration.ofSeconds(60), false);
    agent.writeConfig("echo.yaml", DEBUG_ECHO);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> agent.agent.devicePlugins().served().size() == 3);
    try (KubeletEmulator late = KubeletEmulator.builder(agent.devicePluginDir).build()) {
      late.start();
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> late.capacity().getOrDefault("akri.sh/akri-debug-echo-foo", 0L) == 4);
    }
  }

  private static String instanceName(String config, String id, String node) {
    return io.jakri.crd.InstanceNames.instanceName(config, id, false, node);
  }
}
