package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

@EnableKubernetesMockClient(crud = true)
class ClusterAgentIT {

  KubernetesMockServer server;
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
  void setUp() {
    cluster = new ClusterHarness(server, client, tmp);
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
    assertThat(Map.copyOf(cluster.agent("n1").apiCalls().orElseThrow().snapshot())).isNotEmpty();
  }
}
