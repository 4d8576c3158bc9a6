package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.crd.Configuration;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * Many Instances at once, and a controller replaced half-way, on the real API server (the
 * controller's requests counted by its client's interceptor).
 */
@ExtendWith(RealKube.class)
class ScaleIT {

  static final Duration WAIT = Duration.ofSeconds(90);

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "scale");
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

  int services() {
    return cluster.client.services().inNamespace(cluster.ns).list().getItems().size();
  }

  /**
   * The Configuration of {@link RealCluster#podConfiguration} with headless Services: the API
   * server's Service range (a /24 here, as in small clusters) has 254 cluster IPs, fewer than the
   * 501 Services of the burst; a headless Service needs none.
   */
  Configuration headless() {
    return cluster.configuration(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: cam
        spec:
          discoveryHandler:
            name: simulated
          capacity: 2
          brokerSpec:
            brokerPodSpec:
              containers:
                - name: broker
                  image: nginx:1
                  resources:
                    limits:
                      "{{PLACEHOLDER}}": "1"
          instanceServiceSpec:
            clusterIP: None
            ports:
              - name: grpc
                port: 8083
                targetPort: 8083
          configurationServiceSpec:
            clusterIP: None
            ports:
              - name: grpc
                port: 8083
                targetPort: 8083
        """);
  }

  @Test
  void aBurstOf500InstancesCostsABoundedNumberOfRequests() throws Exception {
    int n = 500;
    Configuration c = headless();
    RealCluster.Running controller = cluster.start();
    Map<String, Long> before = controller.calls().snapshot();
    long started = System.nanoTime();

    for (int i = 0; i < n; i++) {
      cluster.instance(c, String.format("cam-%06x", i), false, i % 2 == 0 ? "n1" : "n2");
    }

    await().atMost(WAIT).until(() -> pods().size() == n && services() == n + 1);
    await()
        .atMost(WAIT)
        .until(
            () -> {
              Configuration now = cluster.stored("cam");
              return now.getStatus() != null
                  && now.getStatus().getInstances() == n
                  && now.getStatus().getConditions().stream()
                      .anyMatch(x -> "True".equals(x.getStatus()));
            });
    await().atMost(WAIT).until(() -> controller.controller().queueDepth() == 0);
    long seconds = Duration.ofNanos(System.nanoTime() - started).toSeconds();
    Map<String, Long> after = controller.calls().snapshot();
    System.out.printf(
        "CONTROLLER burst %d instances in %d s: %d API requests (%d writes; before %s, after %s)%n",
        n,
        seconds,
        controller.calls().total() - before.values().stream().mapToLong(Long::longValue).sum(),
        controller.calls().writes()
            - before.entrySet().stream()
                .filter(e -> !"GET".equals(e.getKey()))
                .mapToLong(Map.Entry::getValue)
                .sum(),
        before,
        after);
    // One Pod and one Service per Instance and the Configuration's Service: no repeated creates
    // (in-flight creates are remembered), nothing updated or deleted, no reads per Instance
    // (caches). The status is written at most once a second while the burst lasts (on the real
    // API server the burst takes tens of seconds, the test's own creates included), and fabric8
    // reads the Configuration before each JSON patch of its status.
    // A create the client sent again after no answer or a 429/5xx (the API server under a CI
    // run's load) is the client's retry, not a second create of the controller's: not counted.
    long retried = controller.calls().unanswered("POST");
    Map<String, Long> posts = controller.calls().posts();
    System.out.printf(
        "CONTROLLER burst: %d POST(s) unanswered or refused for now; answered: %s%n",
        retried, posts);
    // Names are fixed, so no object is created (201) twice. A create answered 409 (it exists) is
    // a reconcile that read the cache before the watch event of a create it then repeated, or a
    // create the API server made but answered 5xx and the client sent again. InFlightCreates keeps
    // the first rare (without it, about one create in ten was repeated); CI runs saw one in 1,000
    // under load, so up to 1 % is allowed, not more.
    long repeated = posts.getOrDefault("pods 409", 0L) + posts.getOrDefault("services 409", 0L);
    assertThat(repeated).isLessThanOrEqualTo((2L * n + 1) / 100);
    assertThat(delta(before, after, "POST") - retried - repeated).isLessThanOrEqualTo(2L * n + 1);
    assertThat(delta(before, after, "PUT") + delta(before, after, "DELETE")).isZero();
    assertThat(delta(before, after, "PATCH")).isBetween(1L, seconds + 2);
    assertThat(delta(before, after, "GET")).isLessThanOrEqualTo(delta(before, after, "PATCH") + 5);
  }

  private static long delta(Map<String, Long> before, Map<String, Long> after, String method) {
    return after.getOrDefault(method, 0L) - before.getOrDefault(method, 0L);
  }

  @Test
  void aControllerRestartedHalfWayMakesNoDuplicatePods() throws Exception {
    int n = 200;
    Configuration c = headless();
    RealCluster.Running first = cluster.start();
    for (int i = 0; i < n; i++) {
      cluster.instance(c, String.format("cam-%06x", i), true, "n1", "n2");
    }
    await().atMost(WAIT).until(() -> pods().size() >= n / 4);
    first.close();
    int leftBehind = pods().size();

    cluster.start();

    await().atMost(WAIT).until(() -> pods().size() == 2 * n && services() == n + 1);
    Map<String, Long> perInstanceAndNode =
        pods().stream()
            .collect(
                Collectors.groupingBy(
                    p ->
                        p.getMetadata().getLabels().get(BrokerLabels.INSTANCE)
                            + "@"
                            + p.getMetadata().getLabels().get(BrokerLabels.TARGET_NODE),
                    Collectors.counting()));
    assertThat(perInstanceAndNode).hasSize(2 * n);
    assertThat(perInstanceAndNode.values()).allMatch(count -> count == 1);
    assertThat(leftBehind).isLessThanOrEqualTo(2 * n);
    // Stays that way.
    await()
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(5))
        .until(() -> pods().size() == 2 * n);
  }
}
