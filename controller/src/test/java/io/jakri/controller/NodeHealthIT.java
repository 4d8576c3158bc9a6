package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.controller.broker.BrokerNames;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/** Nodes that are deleted or stay NotReady are taken out of Instances, with their slots. */
@ExtendWith(RealKube.class)
class NodeHealthIT {

  static final Duration WAIT = Duration.ofSeconds(20);

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "nodes");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  Optional<Instance> instance(String name) {
    return Optional.ofNullable(
        cluster.client.resources(Instance.class).inNamespace(cluster.ns).withName(name).get());
  }

  Instance holdSlots(Instance i, Map<String, String> usage) {
    i.getSpec().setDeviceUsage(new java.util.LinkedHashMap<>(usage));
    return cluster.client.resource(i).inNamespace(cluster.ns).update();
  }

  @Test
  void aDeletedNodeLeavesEveryInstanceAndFreesItsSlots() throws Exception {
    cluster.node("n1");
    cluster.node("n2");
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    Instance shared = cluster.instance(c, "cam-aaaaaa", true, "n1", "n2");
    holdSlots(shared, Map.of("cam-aaaaaa-0", "n2", "cam-aaaaaa-1", "C:0:n1"));
    cluster.instance(c, "cam-bbbbbb", false, "n2");
    cluster.start();
    await()
        .atMost(WAIT)
        .until(() -> cluster.client.pods().inNamespace(cluster.ns).list().getItems().size() == 3);

    cluster.client.nodes().withName("n2").delete();

    await()
        .atMost(WAIT)
        .until(
            () ->
                instance("cam-aaaaaa")
                    .map(i -> i.getSpec().getNodes().equals(java.util.List.of("n1")))
                    .orElse(false));
    assertThat(instance("cam-aaaaaa").orElseThrow().getSpec().getDeviceUsage())
        .containsEntry("cam-aaaaaa-0", "")
        .containsEntry("cam-aaaaaa-1", "C:0:n1");
    // The Instance seen only on n2 is deleted, and its brokers and Service with it.
    await().atMost(WAIT).until(() -> instance("cam-bbbbbb").isEmpty());
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster.client.pods().inNamespace(cluster.ns).list().getItems().stream()
                        .map(p -> p.getMetadata().getName())
                        .toList()
                        .equals(java.util.List.of(BrokerNames.podName("cam-aaaaaa", "n1", true)))
                    && cluster
                            .client
                            .services()
                            .inNamespace(cluster.ns)
                            .withName("cam-bbbbbb-svc")
                            .get()
                        == null);
  }

  @Test
  void aNodeNotReadyPastTheGracePeriodIsRemovedButOneWithinItStays() throws Exception {
    cluster.node("n1");
    cluster.node("stale", false, Instant.now().minus(Duration.ofMinutes(10)));
    cluster.node("flaky", false, Instant.now());
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    Instance i = cluster.instance(c, "cam-aaaaaa", true, "n1", "stale", "flaky");
    holdSlots(i, Map.of("cam-aaaaaa-0", "stale", "cam-aaaaaa-1", "flaky"));
    cluster.start(cluster.options().withNodeGrace(Duration.ofMinutes(5)));

    await()
        .atMost(WAIT)
        .until(
            () ->
                instance("cam-aaaaaa")
                    .map(x -> x.getSpec().getNodes().equals(java.util.List.of("n1", "flaky")))
                    .orElse(false));
    assertThat(instance("cam-aaaaaa").orElseThrow().getSpec().getDeviceUsage())
        .containsEntry("cam-aaaaaa-0", "")
        .containsEntry("cam-aaaaaa-1", "flaky");
    await()
        .atMost(WAIT)
        .until(
            () ->
                cluster
                            .client
                            .pods()
                            .inNamespace(cluster.ns)
                            .withName(BrokerNames.podName("cam-aaaaaa", "flaky", true))
                            .get()
                        != null
                    && cluster
                            .client
                            .pods()
                            .inNamespace(cluster.ns)
                            .withName(BrokerNames.podName("cam-aaaaaa", "stale", true))
                            .get()
                        == null);
  }

  @Test
  void aNodeThatStaysNotReadyIsRemovedWhenItsGracePeriodEnds() throws Exception {
    cluster.node("n1");
    cluster.node("n2");
    Configuration c = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(c, "cam-aaaaaa", true, "n1", "n2");
    cluster.start(cluster.options().withNodeGrace(Duration.ofSeconds(2)));
    await()
        .atMost(WAIT)
        .until(() -> cluster.client.pods().inNamespace(cluster.ns).list().getItems().size() == 2);

    cluster.node("n2", false, Instant.now());

    await()
        .atMost(WAIT)
        .until(
            () ->
                instance("cam-aaaaaa")
                    .map(x -> x.getSpec().getNodes().equals(java.util.List.of("n1")))
                    .orElse(false));
  }
}
