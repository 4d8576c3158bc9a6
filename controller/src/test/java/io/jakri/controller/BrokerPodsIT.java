package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Broker Pods per Instance and node, and how they are kept in line with the cluster, on the real
 * API server: no scheduler or kubelet runs, so Pods stay Pending unless the test sets their phase
 * through the status subresource, and no garbage collector runs, so whatever goes away goes because
 * the controller deleted it.
 */
@ExtendWith(RealKube.class)
class BrokerPodsIT {

  static final Duration WAIT = Duration.ofSeconds(20);

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "pods");
    cluster.node("n1");
    cluster.node("n2");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  List<Pod> pods() {
    return cluster.client.pods().inNamespace(cluster.ns).list().getItems();
  }

  /** The broker Pod of {@code instance} on {@code node}, found by Akri's labels. */
  Optional<Pod> pod(String instance, String node) {
    return pods().stream()
        .filter(p -> instance.equals(p.getMetadata().getLabels().get(BrokerLabels.INSTANCE)))
        .filter(p -> node.equals(p.getMetadata().getLabels().get(BrokerLabels.TARGET_NODE)))
        .findFirst();
  }

  @Test
  void eachInstanceGetsOnePinnedLabelledOwnedPodPerNode() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    Instance local = cluster.instance(c, "cam-aaaaaa", false, "n1");
    Instance shared = cluster.instance(c, "cam-bbbbbb", true, "n1", "n2");
    cluster.start();

    await().atMost(WAIT).until(() -> pods().size() == 3);
    // Akri's names: <node>-<instance>-pod when shared, <instance>-pod when not.
    assertThat(pods())
        .extracting(x -> x.getMetadata().getName())
        .containsExactlyInAnyOrder("n1-cam-bbbbbb-pod", "n2-cam-bbbbbb-pod", "cam-aaaaaa-pod");
    Pod p = pod("cam-bbbbbb", "n2").orElseThrow();
    assertThat(p.getMetadata().getName()).isEqualTo("n2-cam-bbbbbb-pod");
    // Akri's labels (app, controller, akri.sh/*) and jakri's managed-by.
    assertThat(p.getMetadata().getLabels())
        .containsOnly(
            Map.entry("app", "n2-cam-bbbbbb-pod"),
            Map.entry("controller", "akri.sh"),
            Map.entry(BrokerLabels.CONFIGURATION, "cam"),
            Map.entry(BrokerLabels.INSTANCE, "cam-bbbbbb"),
            Map.entry(BrokerLabels.TARGET_NODE, "n2"),
            Map.entry(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER));
    assertThat(pod("cam-aaaaaa", "n1").orElseThrow().getMetadata().getLabels())
        .containsEntry("app", "cam-aaaaaa-pod")
        .containsEntry("controller", "akri.sh");
    assertThat(p.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(
            o -> {
              assertThat(o.getKind()).isEqualTo("Instance");
              assertThat(o.getName()).isEqualTo("cam-bbbbbb");
              assertThat(o.getUid()).isEqualTo(shared.getMetadata().getUid());
            });
    var term =
        p.getSpec()
            .getAffinity()
            .getNodeAffinity()
            .getRequiredDuringSchedulingIgnoredDuringExecution()
            .getNodeSelectorTerms()
            .get(0);
    assertThat(term.getMatchFields())
        .singleElement()
        .satisfies(
            f -> {
              assertThat(f.getKey()).isEqualTo("metadata.name");
              assertThat(f.getValues()).containsExactly("n2");
            });
    assertThat(p.getSpec().getContainers().get(0).getResources().getLimits())
        .containsOnlyKeys("akri.sh/cam-bbbbbb")
        .containsEntry("akri.sh/cam-bbbbbb", new Quantity("1"));
    assertThat(pod("cam-aaaaaa", "n1")).isPresent();
    assertThat(pod("cam-aaaaaa", "n2")).isEmpty();
    assertThat(local.getMetadata().getName()).isEqualTo("cam-aaaaaa");
  }

  @Test
  void aDeletedBrokerPodComesBack() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> pod("cam-aaaaaa", "n1").isPresent());
    String uid = pod("cam-aaaaaa", "n1").orElseThrow().getMetadata().getUid();

    cluster
        .client
        .pods()
        .inNamespace(cluster.ns)
        .withName(BrokerNames.podName("cam-aaaaaa", "n1", false))
        .delete();

    await()
        .atMost(WAIT)
        .until(
            () ->
                pod("cam-aaaaaa", "n1")
                    .filter(p -> !p.getMetadata().getUid().equals(uid))
                    .isPresent());
  }

  @Test
  void aPodThatEndedIsReplaced() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> pod("cam-aaaaaa", "n1").isPresent());
    Pod p = pod("cam-aaaaaa", "n1").orElseThrow();
    String uid = p.getMetadata().getUid();

    // No kubelet runs: the test plays it, through the status subresource.
    cluster.podPhase(p.getMetadata().getName(), "Failed");

    await()
        .atMost(WAIT)
        .until(
            () ->
                pod("cam-aaaaaa", "n1")
                    .filter(x -> !x.getMetadata().getUid().equals(uid))
                    .isPresent());
  }

  @Test
  void aPodPendingPastTheGracePeriodIsReplacedAndARunningOneIsKept() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.start(cluster.options().withPendingGrace(Duration.ofSeconds(2)));
    await().atMost(WAIT).until(() -> pod("cam-aaaaaa", "n1").isPresent());
    String first = pod("cam-aaaaaa", "n1").orElseThrow().getMetadata().getUid();

    // Never scheduled (no status: Pending) -> replaced after the grace period.
    await()
        .atMost(WAIT)
        .until(
            () ->
                pod("cam-aaaaaa", "n1")
                    .filter(x -> !x.getMetadata().getUid().equals(first))
                    .isPresent());
    Pod second = pod("cam-aaaaaa", "n1").orElseThrow();
    cluster.podPhase(second.getMetadata().getName(), "Running");

    // Running past the grace period: kept.
    await()
        .during(Duration.ofSeconds(4))
        .atMost(Duration.ofSeconds(6))
        .until(
            () ->
                pod("cam-aaaaaa", "n1")
                    .map(x -> x.getMetadata().getUid().equals(second.getMetadata().getUid()))
                    .orElse(false));
  }

  @Test
  void aConfigurationEditRollsItsBrokers() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", true, "n1", "n2");
    cluster.start();
    await().atMost(WAIT).until(() -> pods().size() == 2);

    cluster.podConfiguration("cam", "nginx:2");

    await()
        .atMost(WAIT)
        .until(
            () ->
                pods().size() == 2
                    && pods().stream()
                        .allMatch(
                            p -> p.getSpec().getContainers().get(0).getImage().equals("nginx:2")));
  }

  @Test
  void anInstanceOrNodeThatGoesAwayTakesItsBrokersAndServicesWithIt() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    Instance a = cluster.instance(c, "cam-aaaaaa", true, "n1", "n2");
    cluster.instance(c, "cam-bbbbbb", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> pods().size() == 3);
    await().atMost(WAIT).until(() -> services().size() == 3);

    // n2 leaves the shared Instance (the agent on n2 no longer sees it).
    a.getSpec().setNodes(List.of("n1"));
    cluster.client.resource(a).inNamespace(cluster.ns).update();
    await().atMost(WAIT).until(() -> pod("cam-aaaaaa", "n2").isEmpty());
    assertThat(pod("cam-aaaaaa", "n1")).isPresent();

    // The Instance goes: its Pod and Service go, explicitly (nothing garbage-collects here).
    cluster
        .client
        .resources(Instance.class)
        .inNamespace(cluster.ns)
        .withName("cam-aaaaaa")
        .delete();
    await().atMost(WAIT).until(() -> pods().size() == 1 && services().size() == 2);
    assertThat(services()).containsExactlyInAnyOrder("cam-bbbbbb-svc", "cam-svc");

    // The last one goes: the Configuration Service goes too.
    cluster
        .client
        .resources(Instance.class)
        .inNamespace(cluster.ns)
        .withName("cam-bbbbbb")
        .delete();
    await().atMost(WAIT).until(() -> pods().isEmpty() && services().isEmpty());
  }

  @Test
  void aDeletedConfigurationTakesItsBrokersAndServicesWithIt() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", true, "n1", "n2");
    cluster.start();
    await().atMost(WAIT).until(() -> pods().size() == 2 && services().size() == 2);

    // The Instance stays (no garbage collector runs; agents may be slow to react).
    cluster.client.resources(Configuration.class).inNamespace(cluster.ns).withName("cam").delete();

    await().atMost(WAIT).until(() -> pods().isEmpty() && services().isEmpty());
  }

  @Test
  void anInitContainerRequestingTheDeviceGetsTheInstanceResourceAsTheMainContainerDoes()
      throws Exception {
    // Akri issue #843: the init container's {{PLACEHOLDER}} must be rewritten too, or the Pod
    // asks for a resource no node has and stays Pending.
    cluster.configuration(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: cam
        spec:
          discoveryHandler:
            name: simulated
          brokerSpec:
            brokerPodSpec:
              initContainers:
                - name: prepare
                  image: busybox:1
                  resources:
                    requests:
                      "{{PLACEHOLDER}}": "1"
                      cpu: 10m
                    limits:
                      "{{PLACEHOLDER}}": "1"
              containers:
                - name: broker
                  image: nginx:1
                  resources:
                    limits:
                      "{{PLACEHOLDER}}": "1"
        """);
    Configuration c =
        cluster.client.resources(Configuration.class).inNamespace(cluster.ns).withName("cam").get();
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.start();

    await().atMost(WAIT).until(() -> pod("cam-aaaaaa", "n1").isPresent());
    Pod p = pod("cam-aaaaaa", "n1").orElseThrow();
    var init = p.getSpec().getInitContainers().get(0).getResources();
    assertThat(init.getRequests())
        .containsOnly(
            Map.entry("akri.sh/cam-aaaaaa", new Quantity("1")),
            Map.entry("cpu", new Quantity("10m")));
    assertThat(init.getLimits()).containsOnly(Map.entry("akri.sh/cam-aaaaaa", new Quantity("1")));
    assertThat(p.getSpec().getContainers().get(0).getResources().getLimits())
        .containsOnly(Map.entry("akri.sh/cam-aaaaaa", new Quantity("1")));
  }

  List<String> services() {
    return cluster.client.services().inNamespace(cluster.ns).list().getItems().stream()
        .map(s -> s.getMetadata().getName())
        .toList();
  }

  @Test
  void servicesSelectTheirBrokers() throws Exception {
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.start();
    await().atMost(WAIT).until(() -> services().size() == 2);
    var instanceSvc =
        cluster.client.services().inNamespace(cluster.ns).withName("cam-aaaaaa-svc").get();
    var configurationSvc =
        cluster.client.services().inNamespace(cluster.ns).withName("cam-svc").get();
    assertThat(instanceSvc.getMetadata().getLabels())
        .containsEntry("app", "cam-aaaaaa-svc")
        .containsEntry("controller", "akri.sh");
    assertThat(configurationSvc.getMetadata().getLabels())
        .containsEntry("app", "cam-svc")
        .containsEntry("controller", "akri.sh");
    assertThat(instanceSvc.getSpec().getSelector())
        .isEqualTo(Map.of(BrokerLabels.INSTANCE, "cam-aaaaaa"));
    assertThat(configurationSvc.getSpec().getSelector())
        .isEqualTo(Map.of(BrokerLabels.CONFIGURATION, "cam"));
    assertThat(instanceSvc.getSpec().getPorts().get(0).getPort()).isEqualTo(8083);
    Pod broker = pod("cam-aaaaaa", "n1").orElseThrow();
    assertThat(broker.getMetadata().getLabels())
        .containsAllEntriesOf(instanceSvc.getSpec().getSelector())
        .containsAllEntriesOf(configurationSvc.getSpec().getSelector());
    assertThat(configurationSvc.getMetadata().getOwnerReferences().get(0).getKind())
        .isEqualTo("Configuration");
  }
}
