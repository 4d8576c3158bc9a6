package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.crd.Configuration;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.UUID;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code --label-node} on the real API server (issue 31 item 2), the agent on its own
 * ServiceAccount bound only by agent-rbac.yaml: two Configurations label the Node with their
 * Instance counts, kept current; an agent stopped while one Configuration is deleted removes that
 * label when it comes back; a user's labels, {@code akri.sh/} ones included, are never touched.
 */
@ExtendWith(RealKube.class)
class NodeLabelsIT {

  @TempDir Path tmp;
  ClusterHarness cluster;
  KubernetesClient admin;
  String node;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "labels"), tmp);
    cluster.editOptions(o -> o.withLabelNode(true));
    admin = cluster.admin;
    node = "labels-" + UUID.randomUUID().toString().substring(0, 8);
    admin
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(node)
                .withLabels(Map.of("team", "a", "akri.sh/users-own", "keep"))
                .endMetadata()
                .build())
        .create();
  }

  @AfterEach
  void tearDown() {
    try {
      cluster.close();
    } finally {
      admin.nodes().withName(node).delete();
    }
  }

  String devices(String resource, int count) {
    StringBuilder yaml =
        new StringBuilder("deviceMapping:\n  - hosts: [" + node + "]\n    devices:\n");
    for (int i = 0; i < count; i++) {
      yaml.append("      - resourceName: ")
          .append(resource)
          .append("\n        instanceID: \"")
          .append(i)
          .append("\"\n");
    }
    return yaml.toString();
  }

  Map<String, String> labels() {
    Node n = admin.nodes().withName(node).get();
    return n.getMetadata().getLabels();
  }

  void awaitLabels(Map<String, String> akri) {
    await()
        .atMost(Duration.ofSeconds(40))
        .untilAsserted(
            () -> {
              Map<String, String> labels = labels();
              assertThat(labels)
                  .containsEntry("team", "a")
                  .containsEntry("akri.sh/users-own", "keep");
              Map<String, String> agents = new java.util.TreeMap<>(labels);
              agents.keySet().removeIf(k -> !k.startsWith("akri.sh/") || k.endsWith("users-own"));
              assertThat(agents).isEqualTo(akri);
            });
  }

  @Test
  void twoConfigurationsLabelTheNodeAndARestartedAgentRemovesWhatWentWhileItWasAway()
      throws Exception {
    cluster.start(node, Duration.ofSeconds(2));
    cluster.apply(
        ClusterHarness.configuration("lbl-a", "static", 1, devices("example.com/lbl-a", 2)));
    cluster.apply(
        ClusterHarness.configuration("lbl-b", "static", 1, devices("example.com/lbl-b", 1)));
    awaitLabels(Map.of("akri.sh/lbl-a", "2", "akri.sh/lbl-b", "1"));

    // A device more: the count follows.
    cluster.apply(
        ClusterHarness.configuration("lbl-a", "static", 1, devices("example.com/lbl-a", 3)));
    awaitLabels(Map.of("akri.sh/lbl-a", "3", "akri.sh/lbl-b", "1"));

    // Killed (its Instances and labels stay); lbl-b is deleted while it is away. Every version of
    // the Node from then on is watched: the restarted agent must never drop lbl-a (as it would if
    // it labelled from its store before the store had listed the Instances).
    cluster.stop(node);
    admin.resources(Configuration.class).inNamespace(cluster.ns).withName("lbl-b").delete();
    assertThat(labels()).containsEntry("akri.sh/lbl-b", "1");
    java.util.List<Map<String, String>> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    try (var watch =
        admin
            .nodes()
            .withName(node)
            .watch(
                new io.fabric8.kubernetes.client.Watcher<Node>() {
                  @Override
                  public void eventReceived(Action action, Node n) {
                    seen.add(Map.copyOf(n.getMetadata().getLabels()));
                  }

                  @Override
                  public void onClose(io.fabric8.kubernetes.client.WatcherException cause) {}
                })) {
      cluster.start(node, Duration.ofSeconds(2));
      awaitLabels(Map.of("akri.sh/lbl-a", "3"));
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> !seen.isEmpty() && !seen.get(seen.size() - 1).containsKey("akri.sh/lbl-b"));
    }
    assertThat(seen).allSatisfy(l -> assertThat(l).containsEntry("akri.sh/lbl-a", "3"));

    // The last Configuration goes: no label of the agent's, no record of any.
    admin.resources(Configuration.class).inNamespace(cluster.ns).withName("lbl-a").delete();
    awaitLabels(Map.of());
    assertThat(admin.nodes().withName(node).get().getMetadata().getAnnotations())
        .doesNotContainKey(NodeLabels.OWNED);
  }
}
