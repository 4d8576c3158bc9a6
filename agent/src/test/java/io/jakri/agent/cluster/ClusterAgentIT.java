package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

@ExtendWith(RealKube.class)
class ClusterAgentIT {

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  static final String WIDGETS =
      ClusterHarness.configuration(
          "widgets",
          "static",
          2,
          """
          deviceMapping:
            - hosts: [n1, n2]
              devices:
                - resourceName: example.com/widget
                  instanceID: "0001"
                  env:
                    IP: 10.0.0.1
            - hosts: [n1]
              devices:
                - resourceName: example.com/widget
                  instanceID: "0002"
          """);

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "cluster-agent"), tmp);
    client = cluster.admin;
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void sharedDeviceIsOneInstanceListingEveryNodeThatSeesIt() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.start("n2", Duration.ofSeconds(30));
    Configuration config = cluster.apply(WIDGETS);

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(cluster.instances())
                    .extracting(i -> i.getSpec().getNodes())
                    .containsExactlyInAnyOrder(List.of("n1", "n2"), List.of("n1")));
    List<Instance> instances = cluster.instances();
    for (Instance i : instances) {
      assertThat(i.getMetadata().getName()).matches("widgets-[0-9a-f]{6}");
      assertThat(i.getSpec().getConfigurationName()).isEqualTo("widgets");
      assertThat(i.getSpec().getCapacity()).isEqualTo(2);
      assertThat(i.getSpec().getShared()).isTrue();
      assertThat(i.getSpec().getDeviceUsage())
          .containsOnlyKeys(i.getMetadata().getName() + "-0", i.getMetadata().getName() + "-1")
          .allSatisfy((slot, usage) -> assertThat(usage).isEmpty());
      assertThat(i.getMetadata().getOwnerReferences())
          .singleElement()
          .satisfies(
              o -> {
                assertThat(o.getKind()).isEqualTo("Configuration");
                assertThat(o.getName()).isEqualTo("widgets");
                assertThat(o.getUid()).isEqualTo(config.getMetadata().getUid());
              });
    }
    String shared =
        instances.stream()
            .filter(i -> i.getSpec().getNodes().size() == 2)
            .findFirst()
            .orElseThrow()
            .getMetadata()
            .getName();
    String only1 =
        instances.stream()
            .filter(i -> i.getSpec().getNodes().size() == 1)
            .findFirst()
            .orElseThrow()
            .getMetadata()
            .getName();
    cluster.awaitCapacity("n1", "akri.sh/" + shared, 2);
    cluster.awaitCapacity("n2", "akri.sh/" + shared, 2);
    cluster.awaitCapacity("n1", "akri.sh/" + only1, 2);
    cluster.awaitCapacity("n1", "example.com/widget", 4);
    cluster.awaitCapacity("n2", "example.com/widget", 2);
    assertThat(cluster.kubelet("n2").capacity()).doesNotContainKey("akri.sh/" + only1);
    assertThat(cluster.instance(shared).orElseThrow().getMetadata().getLabels())
        .containsEntry("akri.sh/configuration", "widgets");
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              Configuration c = stored("widgets");
              // Each node's entry arrives with its own write: absent is "not yet", not an error.
              assertThat(c.getStatus()).isNotNull();
              assertThat(c.getStatus().getNodes()).containsKeys("n1", "n2");
              assertThat(c.getStatus().getNodes().get("n1").getState()).isEqualTo("Discovering");
              assertThat(c.getStatus().getNodes().get("n2").getState()).isEqualTo("Discovering");
              assertThat(c.getStatus().getNodes().get("n1").getDevices()).isEqualTo(2);
              assertThat(c.getStatus().getNodes().get("n2").getDevices()).isEqualTo(1);
            });
    // Let the agents' writes in flight land first (no patch for 2 s).
    java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
    await()
        .pollInterval(Duration.ofMillis(200))
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(20))
        .until(() -> last.getAndSet(patches()) == patches());
    // A condition the controller writes is kept and does not trigger rewrites.
    cluster
        .admin
        .genericKubernetesResources("akri.sh/v0", "Configuration")
        .inNamespace(cluster.ns)
        .withName("widgets")
        .subresource("status")
        .patch(
            io.fabric8.kubernetes.client.dsl.base.PatchContext.of(
                io.fabric8.kubernetes.client.dsl.base.PatchType.JSON),
            "[{\"op\":\"add\",\"path\":\"/status/conditions\",\"value\":"
                + "[{\"type\":\"BrokersReady\",\"status\":\"True\",\"reason\":\"BrokersCreated\","
                + "\"message\":\"\",\"lastTransitionTime\":\"2026-11-21T10:00:00Z\"}]}]");
    // No agent keeps rewriting: a later look finds the same resourceVersion and patch count.
    long patches = patches();
    String version = stored("widgets").getMetadata().getResourceVersion();
    await()
        .during(Duration.ofSeconds(1))
        .atMost(Duration.ofSeconds(5))
        .untilAsserted(
            () -> {
              assertThat(patches()).isEqualTo(patches);
              assertThat(stored("widgets").getMetadata().getResourceVersion()).isEqualTo(version);
            });
    // The conditions, the count and the observed generation are the controller's: agents write
    // only their own node entries.
    assertThat(stored("widgets").getStatus().getConditions())
        .extracting(c -> c.getType())
        .containsExactly("BrokersReady");
    assertThat(stored("widgets").getStatus().getInstances()).isNull();
    assertThat(stored("widgets").getStatus().getObservedGeneration()).isNull();
  }

  private long patches() {
    return cluster.nodes().stream()
        .mapToLong(n -> cluster.agent(n).apiCalls().orElseThrow().get(ApiCalls.Verb.PATCH))
        .sum();
  }

  private String sharedInstance() {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> cluster.instances().stream().anyMatch(i -> i.getSpec().getNodes().size() == 2));
    return cluster.instances().stream()
        .filter(i -> i.getSpec().getNodes().size() == 2)
        .findFirst()
        .orElseThrow()
        .getMetadata()
        .getName();
  }

  private Configuration stored(String name) {
    return cluster.storedConfiguration(name);
  }

  @Test
  void slotClaimedOnOneNodeTurnsUnhealthyOnTheOtherAndIsRecordedInDeviceUsage() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.start("n2", Duration.ofSeconds(30));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 2);

    PodAdmission pod =
        cluster
            .kubelet("n1")
            .admit(Pod.of("default", "camera-user", Container.of("app", "akri.sh/" + shared, 1)));

    String slot = pod.containers().get("app").deviceIds().get("akri.sh/" + shared).get(0);
    assertThat(cluster.instance(shared).orElseThrow().getSpec().getDeviceUsage())
        .containsEntry(slot, "n1");
    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 1);
    assertThat(cluster.kubelet("n2").devices("akri.sh/" + shared)).containsEntry(slot, "Unhealthy");
    cluster.awaitAllocatable("n1", "akri.sh/" + shared, 2);
  }

  @Test
  void configurationEditsReachRunningDiscoveryAndExistingInstances() throws Exception {
    // A 5 s offline grace: the device the edit drops is removed after it (30 s cost this test 30
    // s).
    cluster.start("n1", Duration.ofSeconds(5));
    cluster.start("n2", Duration.ofSeconds(5));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitCapacity("n1", "akri.sh/" + shared, 2);

    cluster.edit(
        "widgets",
        edited -> {
          edited.getSpec().setCapacity(3);
          edited.getSpec().setBrokerProperties(Map.of("GREETING", "hello"));
          edited
              .getSpec()
              .getDiscoveryHandler()
              .setDiscoveryDetails(
                  """
        deviceMapping:
          - hosts: [n1, n2]
            devices:
              - resourceName: example.com/widget
                instanceID: "0001"
                env:
                  IP: 10.0.0.9
        """);
        });

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              Instance i = cluster.instance(shared).orElseThrow();
              assertThat(i.getSpec().getCapacity()).isEqualTo(3);
              assertThat(i.getSpec().getBrokerProperties())
                  .containsEntry("GREETING", "hello")
                  .containsEntry("IP", "10.0.0.9");
              assertThat(i.getSpec().getDeviceUsage()).hasSize(3);
            });
    cluster.awaitCapacity("n1", "akri.sh/" + shared, 3);
    cluster.awaitCapacity("n2", "akri.sh/" + shared, 3);
    // The n1-only device left the mapping: unhealthy at once, gone after the grace.
    await().atMost(Duration.ofSeconds(40)).until(() -> cluster.instances().size() == 1);
    assertThat(cluster.instance(shared)).isPresent();
  }

  @Test
  void deletingAConfigurationRemovesItsInstancesAndRetiresItsResources() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.start("n2", Duration.ofSeconds(30));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitCapacity("n1", "akri.sh/" + shared, 2);

    cluster
        .admin
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName("widgets")
        .delete();

    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().isEmpty());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                cluster.agent("n1").devicePlugins().served().isEmpty()
                    && cluster.agent("n2").devicePlugins().served().isEmpty());
  }

  @Test
  void configurationsTheAgentCannotActOnGetANodeStateAndAnEventAndNoInstances() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.apply(WIDGETS);
    cluster.apply(ClusterHarness.configuration("broken", "static", 1, "deviceMapping: 5"));
    cluster.apply(ClusterHarness.configuration("nohandler", "no-such-handler", 1, "a: b"));
    cluster.apply(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: secretive
          namespace: default
        spec:
          discoveryHandler:
            name: static
            discoveryDetails: "deviceMapping: []"
            discoveryProperties:
              - name: PASSWORD
                valueFrom:
                  secretKeyRef:
                    name: missing-secret
                    key: password
        """);

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(state("broken")).contains("Invalid");
              assertThat(state("nohandler")).contains("HandlerMissing");
              assertThat(state("secretive")).contains("Invalid");
              assertThat(state("widgets")).contains("Discovering");
            });
    assertThat(stored("broken").getStatus().getNodes().get("n1").getMessage())
        .contains("deviceMapping");
    assertThat(stored("secretive").getStatus().getNodes().get("n1").getMessage())
        .contains("PASSWORD")
        .contains("missing-secret");
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(cluster.admin.v1().events().inNamespace(cluster.ns).list().getItems())
                    .extracting(e -> e.getInvolvedObject().getName() + ":" + e.getReason())
                    .contains(
                        "broken:InvalidConfiguration",
                        "nohandler:HandlerMissing",
                        "secretive:InvalidConfiguration"));
    assertThat(cluster.instances())
        .allSatisfy(i -> assertThat(i.getSpec().getConfigurationName()).isEqualTo("widgets"))
        .hasSize(2);
  }

  /** Node n1's state for {@code configuration}, as its agent wrote it. */
  private java.util.Optional<String> state(String configuration) {
    Configuration c = stored(configuration);
    if (c == null || c.getStatus() == null || c.getStatus().getNodes() == null) {
      return java.util.Optional.empty();
    }
    return java.util.Optional.ofNullable(c.getStatus().getNodes().get("n1")).map(n -> n.getState());
  }

  @Test
  void agentRestartKeepsClaimsOfRunningPodsAndCreatesNoDuplicates() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.start("n2", Duration.ofSeconds(30));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitAllocatable("n1", "akri.sh/" + shared, 2);
    PodAdmission pod =
        cluster
            .kubelet("n1")
            .admit(Pod.of("default", "user", Container.of("app", "akri.sh/" + shared, 1)));
    String slot = pod.containers().get("app").deviceIds().get("akri.sh/" + shared).get(0);
    List<String> before =
        cluster.instances().stream().map(i -> i.getMetadata().getUid()).sorted().toList();

    cluster.stop("n1");
    cluster.start("n1", Duration.ofSeconds(30));

    cluster.awaitCapacity("n1", "akri.sh/" + shared, 2);
    assertThat(cluster.instances().stream().map(i -> i.getMetadata().getUid()).sorted().toList())
        .isEqualTo(before);
    assertThat(cluster.instance(shared).orElseThrow().getSpec().getDeviceUsage())
        .containsEntry(slot, "n1");
    assertThat(cluster.instance(shared).orElseThrow().getSpec().getNodes())
        .containsExactly("n1", "n2");
  }

  @Test
  void instanceDeletedWhileItsDeviceIsHereIsWrittenAgain() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.apply(WIDGETS);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().size() == 2);
    Instance victim = cluster.instances().get(0);

    cluster.admin.resource(victim).delete();

    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                cluster
                    .instance(victim.getMetadata().getName())
                    .map(i -> !i.getMetadata().getUid().equals(victim.getMetadata().getUid()))
                    .orElse(false));
  }

  @Test
  void vanishedSharedDeviceLeavesOnlyThatNodeAfterTheGrace() throws Exception {
    cluster.start("n1", Duration.ofSeconds(1));
    cluster.start("n2", Duration.ofSeconds(1));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 2);

    cluster.edit(
        "widgets",
        edited -> {
          edited
              .getSpec()
              .getDiscoveryHandler()
              .setDiscoveryDetails(
                  """
        deviceMapping:
          - hosts: [n1]
            devices:
              - resourceName: example.com/widget
                instanceID: "0001"
                env:
                  IP: 10.0.0.1
        """);
        });

    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 0);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(cluster.instance(shared).orElseThrow().getSpec().getNodes())
                    .containsExactly("n1"));
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().size() == 1);
  }

  @Test
  void nodeKeepsNoAkriResourcesTheAgentStoppedServing() throws Exception {
    cluster
        .admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName("n1")
                .endMetadata()
                .withNewStatus()
                .addToCapacity("cpu", new Quantity("2"))
                .addToCapacity("akri.sh/left-over-abcdef", new Quantity("0"))
                .addToAllocatable("akri.sh/left-over-abcdef", new Quantity("0"))
                .endStatus()
                .build())
        .create();
    cluster.start("n1", Duration.ofSeconds(1));
    cluster.apply(WIDGETS);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().size() == 2);
    String gone = InstanceNames.instanceName("widgets", "example.com/widget/0002", true, "n1");
    assertThat(cluster.instance(gone)).isPresent();
    // The kubelet would have put the served resource on the Node.
    io.fabric8.kubernetes.api.model.Node node = cluster.admin.nodes().withName("n1").get();
    node.getStatus().getCapacity().put("akri.sh/" + gone, new Quantity("2"));
    node.getStatus().getAllocatable().put("akri.sh/" + gone, new Quantity("2"));
    cluster.admin.nodes().resource(node).updateStatus();

    cluster.edit(
        "widgets",
        edited -> {
          edited
              .getSpec()
              .getDiscoveryHandler()
              .setDiscoveryDetails(
                  """
        deviceMapping:
          - hosts: [n1]
            devices:
              - resourceName: example.com/widget
                instanceID: "0001"
        """);
        });

    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var status = cluster.admin.nodes().withName("n1").get().getStatus();
              assertThat(status.getCapacity())
                  .containsKey("cpu")
                  .doesNotContainKeys("akri.sh/" + gone, "akri.sh/left-over-abcdef");
              assertThat(status.getAllocatable())
                  .doesNotContainKeys("akri.sh/" + gone, "akri.sh/left-over-abcdef");
            });
  }

  @Test
  void slotsNoContainerUsesAreFreedInTheApiServerAfterTheReclaimGrace() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30), Duration.ofMillis(500));
    cluster.start("n2", Duration.ofSeconds(30), Duration.ofMillis(500));
    cluster.apply(WIDGETS);
    String shared = sharedInstance();
    cluster.awaitAllocatable("n1", "akri.sh/" + shared, 2);
    cluster.awaitAllocatable("n1", "example.com/widget", 4);
    cluster
        .kubelet("n1")
        .admit(Pod.of("default", "done", Container.of("app", "akri.sh/" + shared, 1)));
    cluster
        .kubelet("n1")
        .admit(Pod.of("default", "class-user", Container.of("app", "example.com/widget", 1)));
    PodAdmission running =
        cluster
            .kubelet("n1")
            .admit(Pod.of("default", "running", Container.of("app", "akri.sh/" + shared, 1)));
    String kept = running.containers().get("app").deviceIds().get("akri.sh/" + shared).get(0);
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                cluster.instances().stream()
                        .flatMap(i -> i.getSpec().getDeviceUsage().values().stream())
                        .filter(u -> !u.isEmpty())
                        .count()
                    == 3);

    cluster.kubelet("n1").removePod("default", "done");
    cluster.kubelet("n1").removePod("default", "class-user");

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(
                        cluster.instances().stream()
                            .flatMap(i -> i.getSpec().getDeviceUsage().entrySet().stream())
                            .filter(e -> !e.getValue().isEmpty())
                            .map(e -> e.getKey() + "=" + e.getValue())
                            .toList())
                    .containsExactly(kept + "=n1"));
    cluster.awaitAllocatable("n2", "akri.sh/" + shared, 1);
  }

  @Test
  void aClaimOrphanedByAnAgentThatDiedMidAllocateIsFreedAfterItsRestart() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30), Duration.ofMillis(500));
    cluster.apply(WIDGETS);
    await().atMost(Duration.ofSeconds(20)).until(() -> cluster.instances().size() == 2);
    String name = InstanceNames.instanceName("widgets", "example.com/widget/0002", true, "n1");
    cluster.awaitAllocatable("n1", "akri.sh/" + name, 2);
    // The claim is written, but the kubelet never got to record a pod for it (the agent died
    // mid-Allocate): nothing uses the slot.
    cluster
        .devicePlugin("n1", "akri.sh/" + name)
        .allocate(ClusterHarness.allocateRequest(name + "-1"));
    cluster.stop("n1");
    assertThat(cluster.instance(name).orElseThrow().getSpec().getDeviceUsage())
        .containsEntry(name + "-1", "n1");
    List<String> uids =
        cluster.instances().stream().map(i -> i.getMetadata().getUid()).sorted().toList();

    cluster.start("n1", Duration.ofSeconds(30), Duration.ofMillis(500));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(cluster.instance(name).orElseThrow().getSpec().getDeviceUsage())
                    .containsEntry(name + "-1", ""));
    cluster.awaitAllocatable("n1", "akri.sh/" + name, 2);
    assertThat(cluster.instances().stream().map(i -> i.getMetadata().getUid()).sorted().toList())
        .isEqualTo(uids);
  }
}
