package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Pod;
import io.jakri.crd.Configuration;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The controller across namespaces (fabric8's mock API server in CRUD mode): every namespace by
 * default, each Instance's brokers and Services in the Instance's namespace, same-named
 * Configurations in two namespaces kept apart; a list narrows it.
 */
class AllNamespacesIT {

  private static final Duration WAIT = Duration.ofSeconds(20);

  MockCluster cluster;

  @BeforeEach
  void setUp() {
    cluster = new MockCluster();
    cluster.node("n1");
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void brokersOfEveryNamespaceGoToTheirInstancesNamespace() throws Exception {
    Configuration a = cluster.podConfiguration("team-a", "cam", "nginx:1");
    cluster.instance(a, "cam-aaaaaa", false, "n1");
    AllNamespaces controller = cluster.startAcrossNamespaces(List.of());

    // A namespace that gets its first Configuration after the start is served too; the same
    // Configuration and Instance names as team-a's stay apart.
    Configuration b = cluster.podConfiguration("team-b", "cam", "nginx:2");
    cluster.instance(b, "cam-aaaaaa", false, "n1");

    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(pods("team-a"))
                  .singleElement()
                  .satisfies(p -> assertThat(image(p)).isEqualTo("nginx:1"));
              assertThat(pods("team-b"))
                  .singleElement()
                  .satisfies(p -> assertThat(image(p)).isEqualTo("nginx:2"));
              assertThat(cluster.client.services().inNamespace("team-a").list().getItems())
                  .isNotEmpty();
              assertThat(cluster.client.services().inNamespace("team-b").list().getItems())
                  .isNotEmpty();
            });
    assertThat(pods(MockCluster.NS)).isEmpty();
    assertThat(controller.namespaces()).containsExactlyInAnyOrder("team-a", "team-b");
    assertThat(controller.managedPods()).hasSize(2);
  }

  @Test
  void aListOfNamespacesNarrowsWhatIsServed() throws Exception {
    Configuration a = cluster.podConfiguration("team-a", "cam", "nginx:1");
    cluster.instance(a, "cam-aaaaaa", false, "n1");
    Configuration b = cluster.podConfiguration("team-b", "cam", "nginx:2");
    cluster.instance(b, "cam-aaaaaa", false, "n1");

    AllNamespaces controller = cluster.startAcrossNamespaces(List.of("team-b"));

    await().atMost(WAIT).until(() -> pods("team-b").size() == 1);
    assertThat(pods("team-a")).isEmpty();
    assertThat(controller.namespaces()).containsExactly("team-b");
  }

  private List<Pod> pods(String namespace) {
    return cluster.client.pods().inNamespace(namespace).list().getItems();
  }

  private static String image(Pod p) {
    return p.getSpec().getContainers().get(0).getImage();
  }
}
