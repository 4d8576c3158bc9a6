package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.agent.Agent;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode across namespaces, against fabric8's mock API server in CRUD mode: every namespace
 * by default, a list narrows it, Instances go to their Configuration's namespace, same-named
 * Configurations in two namespaces never share a node's resources, and a referenced ConfigMap that
 * changes re-runs discovery.
 */
@ExtendWith(RealKube.class)
class NamespacesIT {

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "namespaces"), tmp);
    client = cluster.admin;
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void configurationsInEveryNamespaceAreServedAndTheirInstancesStayInTheirNamespace()
      throws Exception {
    cluster.start("n1", Duration.ofSeconds(30), WatchedNamespaces.all());
    cluster.apply("team-a", simulated("alpha", "example.com/alpha"));
    cluster.apply("team-b", simulated("beta", "example.com/beta"));

    cluster.awaitCapacity("n1", "example.com/alpha", 1);
    cluster.awaitCapacity("n1", "example.com/beta", 1);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(instances("team-a"))
                  .singleElement()
                  .satisfies(i -> assertThat(i.getSpec().getConfigurationName()).isEqualTo("alpha"))
                  .satisfies(
                      i ->
                          assertThat(i.getMetadata().getOwnerReferences())
                              .singleElement()
                              .satisfies(o -> assertThat(o.getName()).isEqualTo("alpha")));
              assertThat(instances("team-b"))
                  .singleElement()
                  .satisfies(i -> assertThat(i.getSpec().getConfigurationName()).isEqualTo("beta"));
              assertThat(instances(cluster.ns)).isEmpty();
            });
    String alphaInstance = instances("team-a").get(0).getMetadata().getName();
    cluster.awaitCapacity("n1", "akri.sh/" + alphaInstance, 1);
    // Each Configuration's status is written in its own namespace.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () -> {
              Configuration c =
                  client
                      .resources(Configuration.class)
                      .inNamespace("team-b")
                      .withName("beta")
                      .get();
              return c.getStatus() != null;
            });
  }

  @Test
  void aNamespaceListNarrowsWhatIsServed() throws Exception {
    cluster.start("n1", Duration.ofSeconds(30), WatchedNamespaces.of("team-a"));
    cluster.apply("team-b", simulated("beta", "example.com/beta"));
    cluster.apply("team-a", simulated("alpha", "example.com/alpha"));

    cluster.awaitCapacity("n1", "example.com/alpha", 1);
    // Configurations are handled in one pass: once alpha is served, beta was seen or never will be.
    assertThat(cluster.kubelet("n1").capacity()).doesNotContainKey("example.com/beta");
    assertThat(cluster.agent("n1").configurations().orElseThrow().known())
        .containsOnlyKeys("alpha");
    assertThat(instances("team-b")).isEmpty();
  }

  @Test
  void sameNamedConfigurationsInTwoNamespacesNeverShareANode() throws Exception {
    Agent agent = cluster.start("n1", Duration.ofSeconds(30), WatchedNamespaces.all());
    cluster.apply("team-a", simulated("widgets", "example.com/from-a"));
    cluster.awaitCapacity("n1", "example.com/from-a", 1);
    cluster.apply("team-b", simulated("widgets", "example.com/from-b"));

    ConfigurationWatcher watcher = agent.configurations().orElseThrow();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(watcher.shadowed())
                    .containsOnlyKeys("team-b/widgets")
                    .hasValueSatisfying(
                        new org.assertj.core.api.Condition<>(
                            reason ->
                                reason.contains("team-a/widgets")
                                    && reason.contains("akri.sh/widgets"),
                            "names the served Configuration and the resource")));
    assertThat(watcher.namespaceOf("widgets")).contains("team-a");
    assertThat(cluster.kubelet("n1").capacity()).doesNotContainKey("example.com/from-b");
    assertThat(instances("team-b")).isEmpty();
    assertThat(instances("team-a"))
        .singleElement()
        .satisfies(i -> assertThat(i.getMetadata().getName()).startsWith("widgets-"));

    // The older one goes: the other takes the name, its Instances in its own namespace.
    client.resources(Configuration.class).inNamespace("team-a").withName("widgets").delete();
    cluster.awaitCapacity("n1", "example.com/from-b", 1);
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              assertThat(watcher.shadowed()).isEmpty();
              assertThat(instances("team-b")).singleElement();
            });
    assertThat(watcher.namespaceOf("widgets")).contains("team-b");
  }

  @Test
  void aReferencedConfigMapThatChangesRerunsDiscoveryWithTheNewValue() throws Exception {
    Agent agent = cluster.start("n1", Duration.ofSeconds(30), WatchedNamespaces.all());
    // No namespace on the reference: read from "default", as Akri does, although the
    // Configuration is in team-a.
    cluster.apply(
        "team-a",
        simulated("gadgets", "example.com/gadget")
            + "    discoveryProperties:\n"
            + "    - name: MODE\n"
            + "      valueFrom:\n"
            + "        configMapKeyRef: {name: settings, key: mode}\n");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> state(agent, "gadgets") == DiscoveryManager.State.INVALID);
    assertThat(agent.discovery().statuses().get("gadgets").message())
        .contains("ConfigMap default/settings");

    client
        .configMaps()
        .inNamespace("default")
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("settings")
                .endMetadata()
                .addToData("other", "x")
                .build())
        .create();
    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () ->
                assertThat(agent.discovery().statuses().get("gadgets").message())
                    .contains("no such key"));

    client
        .configMaps()
        .inNamespace("default")
        .withName("settings")
        .edit(c -> new ConfigMapBuilder(c).addToData("mode", "fast").build());
    cluster.awaitCapacity("n1", "example.com/gadget", 1);
    assertThat(state(agent, "gadgets")).isNotEqualTo(DiscoveryManager.State.INVALID);

    // The key goes away again: discovery runs again and says so.
    client
        .configMaps()
        .inNamespace("default")
        .withName("settings")
        .edit(c -> new ConfigMapBuilder(c).removeFromData("mode").build());
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> state(agent, "gadgets") == DiscoveryManager.State.INVALID);
  }

  private static DiscoveryManager.State state(Agent agent, String configuration) {
    DiscoveryManager.ConfigurationStatus s = agent.discovery().statuses().get(configuration);
    return s == null ? null : s.state();
  }

  private List<Instance> instances(String namespace) {
    return client.resources(Instance.class).inNamespace(namespace).list().getItems();
  }

  private static String simulated(String name, String resource) {
    return """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: simulated
            discoveryDetails: |
              count: 1
              resourceName: %s
        """
        .formatted(name, resource);
  }
}
