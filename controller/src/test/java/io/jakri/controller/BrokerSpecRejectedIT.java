package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.controller.reconcile.ConfigurationReconciler;
import io.jakri.controller.reconcile.InstanceReconciler;
import io.jakri.crd.Configuration;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * A brokerSpec the API server refuses (really: the real API server validates the Pod, a container
 * without an image is refused with 422 and a field cause): a condition and one Event on the
 * Configuration naming the field, retries with backoff, and other Configurations unaffected. Also
 * the status fields the controller derives next to the agents' entries.
 */
@ExtendWith(RealKube.class)
class BrokerSpecRejectedIT {

  static final Duration WAIT = Duration.ofSeconds(20);
  static final String FIELD = "spec.containers[0].image";

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "rejected");
    cluster.node("n1");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  Configuration noImage() {
    return cluster.configuration(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: bad
        spec:
          discoveryHandler:
            name: simulated
          brokerSpec:
            brokerPodSpec:
              containers:
                - name: broker
        """);
  }

  Optional<Condition> brokersReady(String configuration) {
    return brokersReady(cluster.ns, configuration);
  }

  Optional<Condition> brokersReady(String namespace, String configuration) {
    Configuration c =
        cluster
            .client
            .resources(Configuration.class)
            .inNamespace(namespace)
            .withName(configuration)
            .get();
    if (c.getStatus() == null) {
      return Optional.empty();
    }
    return c.getStatus().getConditions().stream()
        .filter(x -> ConfigurationReconciler.CONDITION.equals(x.getType()))
        .findFirst();
  }

  List<Event> events(String about) {
    return events(cluster.ns, about);
  }

  List<Event> events(String namespace, String about) {
    return cluster.client.v1().events().inNamespace(namespace).list().getItems().stream()
        .filter(e -> about.equals(e.getInvolvedObject().getName()))
        .toList();
  }

  /**
   * Real-server difference: a Pod needs its namespace's {@code default} ServiceAccount (the
   * ServiceAccount admission plugin refuses it with 403 otherwise; a cluster's controller-manager
   * creates that account, none runs here). The controller reports it as it does an invalid spec,
   * keeps serving the other namespace, and creates the broker once the account exists.
   */
  @Test
  void aNamespaceWithoutItsDefaultServiceAccountIsReportedAndTheOthersGoOn() throws Exception {
    String bare = cluster.namespaceWithoutServiceAccount("no-sa");
    Configuration stuck = cluster.podConfiguration(bare, "cam", "nginx:1");
    cluster.instance(stuck, "cam-aaaaaa", false, "n1");
    Configuration fine = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(fine, "cam-aaaaaa", false, "n1");
    cluster.startAcrossNamespaces(List.of(bare, cluster.ns));

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(brokersReady(bare, "cam"))
                  .hasValueSatisfying(
                      c -> {
                        assertThat(c.getStatus()).isEqualTo("False");
                        assertThat(c.getReason()).isEqualTo(InstanceReconciler.FORBIDDEN);
                        assertThat(c.getMessage())
                            .contains("serviceaccount \"default\" not found")
                            .doesNotContain("cam-aaaaaa-pod");
                      });
              assertThat(events(bare, "cam"))
                  .singleElement()
                  .satisfies(
                      e -> assertThat(e.getReason()).isEqualTo(InstanceReconciler.FORBIDDEN));
              assertThat(brokersReady("cam"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            });
    assertThat(cluster.refusals.all())
        .as("the controller's failed requests")
        .isNotEmpty()
        .allSatisfy(
            f -> {
              assertThat(f.code()).isEqualTo(403);
              assertThat(f.path()).isEqualTo("/api/v1/namespaces/" + bare + "/pods");
            });

    cluster.api.serviceAccount(bare, "default");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(
                      cluster
                          .client
                          .pods()
                          .inNamespace(bare)
                          .withName(BrokerNames.podName("cam-aaaaaa", "n1", false))
                          .get())
                  .isNotNull();
              assertThat(brokersReady(bare, "cam"))
                  .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True"));
            });
  }

  /**
   * Real-server difference: a field the Pod API does not know (a typo in {@code brokerPodSpec},
   * which the CRD keeps as it is) is dropped by the API server, which answers with a warning; the
   * Pod is created without it. The mock kept every field.
   */
  @Test
  void anUnknownFieldInABrokerPodSpecIsDroppedByTheApiServer() throws Exception {
    Configuration typo =
        cluster.configuration(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: typo
            spec:
              discoveryHandler:
                name: simulated
              brokerSpec:
                brokerPodSpec:
                  containers:
                    - name: broker
                      image: nginx:1
                      imagePullPolcy: Never
            """);
    assertThat(
            cluster
                .client
                .getKubernetesSerialization()
                .asJson(typo.getSpec().getBrokerSpec().getBrokerPodSpec()))
        .as("kept in the Configuration")
        .contains("imagePullPolcy");
    cluster.instance(typo, "typo-aaaaaa", false, "n1");
    cluster.start();

    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(brokersReady("typo"))
                    .hasValueSatisfying(c -> assertThat(c.getStatus()).isEqualTo("True")));
    var pod =
        cluster
            .client
            .pods()
            .inNamespace(cluster.ns)
            .withName(BrokerNames.podName("typo-aaaaaa", "n1", false))
            .get();
    assertThat(cluster.client.getKubernetesSerialization().asJson(pod))
        .doesNotContain("imagePullPolcy");
    assertThat(pod.getSpec().getContainers().get(0).getImagePullPolicy()).isEqualTo("IfNotPresent");
    assertThat(cluster.refusals.all()).isEmpty();
  }

  @Test
  void aRejectedBrokerSpecIsReportedRetriedAndBlocksNothingElse() throws Exception {
    Configuration bad = noImage();
    // What an agent wrote: its own node entry, which the controller must keep.
    cluster
        .client
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName("bad")
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON),
            """
            [{"op":"add","path":"/status","value":{
              "nodes":{"n1":{"state":"Discovering","message":"","devices":1}}}}]
            """);
    Configuration good = cluster.podConfiguration("good", "nginx:1");
    cluster.instance(bad, "bad-aaaaaa", false, "n1");
    cluster.instance(good, "good-aaaaaa", false, "n1");
    // Retries capped at 500 ms: the test waits for two of them (2 s cost it about 4 s).
    RealCluster.Running controller =
        cluster.start(cluster.options().withRetry(Duration.ofMillis(100), Duration.ofMillis(500)));

    await()
        .atMost(WAIT)
        .until(
            () ->
                brokersReady("bad")
                    .filter(c -> "False".equals(c.getStatus()))
                    .filter(c -> "BrokerSpecRejected".equals(c.getReason()))
                    .filter(c -> c.getMessage().contains(FIELD))
                    .isPresent());
    Configuration after =
        cluster.client.resources(Configuration.class).inNamespace(cluster.ns).withName("bad").get();
    assertThat(after.getStatus().getConditions())
        .extracting(Condition::getType)
        .containsExactly(
            "Discovering",
            "Invalid",
            "HandlerMissing",
            "Failed",
            ConfigurationReconciler.CONDITION);
    assertThat(after.getStatus().getNodes()).containsKey("n1");
    await()
        .atMost(WAIT)
        .until(
            () ->
                events("bad").stream()
                    .anyMatch(
                        e ->
                            "BrokerSpecRejected".equals(e.getReason())
                                && e.getMessage().contains(FIELD)
                                && "Configuration".equals(e.getInvolvedObject().getKind())));

    // The other Configuration's brokers and Services are made meanwhile.
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                            .client
                            .pods()
                            .inNamespace(cluster.ns)
                            .withName(BrokerNames.podName("good-aaaaaa", "n1", false))
                            .get()
                        != null
                    && cluster.client.services().inNamespace(cluster.ns).withName("good-svc").get()
                        != null);
    await()
        .atMost(WAIT)
        .until(() -> brokersReady("good").filter(c -> "True".equals(c.getStatus())).isPresent());

    // Retried (with backoff), but reported once.
    long posts = controller.calls().get("POST");
    await().atMost(WAIT).until(() -> controller.calls().get("POST") >= posts + 2);
    assertThat(events("bad")).hasSize(1);

    // Fixed: the broker is created and the condition turns True.
    cluster.podConfiguration("bad", "nginx:1");
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                        .client
                        .pods()
                        .inNamespace(cluster.ns)
                        .withName(BrokerNames.podName("bad-aaaaaa", "n1", false))
                        .get()
                    != null);
    await()
        .atMost(WAIT)
        .until(() -> brokersReady("bad").filter(c -> "True".equals(c.getStatus())).isPresent());
    assertThat(
            cluster
                .client
                .resources(Configuration.class)
                .inNamespace(cluster.ns)
                .withName("bad")
                .get()
                .getStatus()
                .getConditions())
        .extracting(Condition::getType)
        .containsExactly(
            "Discovering",
            "Invalid",
            "HandlerMissing",
            "Failed",
            ConfigurationReconciler.CONDITION);
  }

  private Configuration stored(String name) {
    return cluster
        .client
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName(name)
        .get();
  }

  private void nodeEntry(String configuration, String node, String state, String message) {
    // As an agent writes it: a merge patch of its own key only.
    cluster
        .client
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName(configuration)
        .subresource("status")
        .patch(
            PatchContext.of(PatchType.JSON_MERGE),
            "{\"status\":{\"nodes\":{\""
                + node
                + "\":{\"state\":\""
                + state
                + "\",\"message\":\""
                + message
                + "\",\"devices\":1}}}}");
  }

  private String conditions(String configuration) {
    Configuration c = stored(configuration);
    return c.getStatus() == null
        ? ""
        : c.getStatus().getConditions().stream()
            .map(x -> x.getType() + "=" + x.getStatus() + ":" + x.getMessage())
            .toList()
            .toString();
  }

  @Test
  void theControllerDerivesConditionsAndCountsFromTheNodesEntriesAndSettles() throws Exception {
    cluster.node("n2");
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", false, "n1");
    cluster.instance(c, "cam-bbbbbb", false, "n2");
    nodeEntry("cam", "n1", "Discovering", "");
    nodeEntry("cam", "n2", "Invalid", "bad details");
    RealCluster.Running controller = cluster.start();

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(conditions("cam"))
                  .contains("Discovering=True:discovering on 1 node(s): n1")
                  .contains("Invalid=True:on node(s) n2: bad details")
                  .contains("HandlerMissing=False")
                  .contains("Failed=False")
                  .contains(ConfigurationReconciler.CONDITION + "=True");
              assertThat(stored("cam").getStatus().getInstances()).isEqualTo(2);
              assertThat(stored("cam").getStatus().getObservedGeneration())
                  .isEqualTo(stored("cam").getMetadata().getGeneration());
            });
    // One owner per field: nothing rewrites it back and forth.
    java.util.concurrent.atomic.AtomicLong last = new java.util.concurrent.atomic.AtomicLong(-1);
    await()
        .pollInterval(Duration.ofMillis(200))
        .during(Duration.ofSeconds(2))
        .atMost(WAIT)
        .until(
            () ->
                last.getAndSet(controller.calls().get("PATCH")) == controller.calls().get("PATCH"));
    String version = stored("cam").getMetadata().getResourceVersion();
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(4))
        .until(() -> stored("cam").getMetadata().getResourceVersion().equals(version));

    // A node's state changes: the conditions follow; an Instance goes: the count follows.
    nodeEntry("cam", "n2", "Discovering", "");
    cluster
        .client
        .resources(io.jakri.crd.Instance.class)
        .inNamespace(cluster.ns)
        .withName("cam-bbbbbb")
        .delete();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(conditions("cam"))
                  .contains("Discovering=True:discovering on 2 node(s): n1, n2")
                  .contains("Invalid=False");
              assertThat(stored("cam").getStatus().getInstances()).isEqualTo(1);
              assertThat(stored("cam").getStatus().getNodes()).containsOnlyKeys("n1", "n2");
            });
  }
}
