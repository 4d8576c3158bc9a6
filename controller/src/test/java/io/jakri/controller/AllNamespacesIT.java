package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.jakri.crd.Configuration;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The controller across namespaces (the real API server; cluster-wide RBAC as shipped): every
 * namespace by default, each Instance's brokers and Services in the Instance's namespace,
 * same-named Configurations in two namespaces kept apart; a list narrows it.
 */
@ExtendWith(RealKube.class)
class AllNamespacesIT {

  private static final Duration WAIT = Duration.ofSeconds(20);

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "all");
    cluster.node("n1");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void brokersOfEveryNamespaceGoToTheirInstancesNamespace() throws Exception {
    String teamA = cluster.namespace("team-a");
    String teamB = cluster.namespace("team-b");
    Configuration a = cluster.podConfiguration(teamA, "cam", "nginx:1");
    cluster.instance(a, "cam-aaaaaa", false, "n1");
    AllNamespaces controller = cluster.startAcrossNamespaces(List.of());

    // A namespace that gets its first Configuration after the start is served too; the same
    // Configuration and Instance names as team-a's stay apart.
    Configuration b = cluster.podConfiguration(teamB, "cam", "nginx:2");
    cluster.instance(b, "cam-aaaaaa", false, "n1");

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(pods(teamA))
                  .singleElement()
                  .satisfies(p -> assertThat(image(p)).isEqualTo("nginx:1"));
              assertThat(pods(teamB))
                  .singleElement()
                  .satisfies(p -> assertThat(image(p)).isEqualTo("nginx:2"));
              assertThat(cluster.client.services().inNamespace(teamA).list().getItems())
                  .isNotEmpty();
              assertThat(cluster.client.services().inNamespace(teamB).list().getItems())
                  .isNotEmpty();
            });
    assertThat(pods(cluster.ns)).isEmpty();
    assertThat(controller.namespaces()).containsExactlyInAnyOrder(teamA, teamB);
    assertThat(controller.managedPods()).hasSize(2);
  }

  @Test
  void aListOfNamespacesNarrowsWhatIsServed() throws Exception {
    String teamA = cluster.namespace("team-a");
    String teamB = cluster.namespace("team-b");
    Configuration a = cluster.podConfiguration(teamA, "cam", "nginx:1");
    cluster.instance(a, "cam-aaaaaa", false, "n1");
    Configuration b = cluster.podConfiguration(teamB, "cam", "nginx:2");
    cluster.instance(b, "cam-aaaaaa", false, "n1");

    AllNamespaces controller = cluster.startAcrossNamespaces(List.of(teamB));

    await().atMost(WAIT).until(() -> pods(teamB).size() == 1);
    assertThat(pods(teamA)).isEmpty();
    assertThat(controller.namespaces()).containsExactly(teamB);
  }

  private List<Pod> pods(String namespace) {
    return cluster.client.pods().inNamespace(namespace).list().getItems();
  }

  private static String image(Pod p) {
    return p.getSpec().getContainers().get(0).getImage();
  }
}
