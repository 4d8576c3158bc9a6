package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** {@link NodeTidier} against fabric8's mock API server in CRUD mode (one server per test). */
// https = false: the mock's TLS set-up needs a newer bcprov than the agent's Blake2b one.
@EnableKubernetesMockClient(crud = true, https = false)
class NodeTidierIT {

  private static final String NODE = "worker-1";

  KubernetesClient client;

  @Test
  void removesOnlyTheNamedResourcesFromCapacityAndAllocatable() throws Exception {
    createNode(
        Map.of(
            "cpu", "4",
            "memory", "8Gi",
            "akri.sh/echo-8120fe", "0",
            "akri.sh/echo", "1",
            "akri.sh/zc-a1b2c3", "1",
            "example.com/widget", "2"),
        Map.of("cpu", "4", "memory", "8Gi", "akri.sh/echo-8120fe", "0", "akri.sh/zc-a1b2c3", "1"));

    Set<String> removed =
        new NodeTidier(client, NODE)
            .removeResources(List.of("akri.sh/echo-8120fe", "akri.sh/echo"));

    assertThat(removed).containsExactlyInAnyOrder("akri.sh/echo-8120fe", "akri.sh/echo");
    Node node = client.nodes().withName(NODE).get();
    assertThat(node.getStatus().getCapacity())
        .containsOnlyKeys("cpu", "memory", "akri.sh/zc-a1b2c3", "example.com/widget")
        .containsEntry("cpu", new Quantity("4"))
        .containsEntry("example.com/widget", new Quantity("2"));
    assertThat(node.getStatus().getAllocatable())
        .containsOnlyKeys("cpu", "memory", "akri.sh/zc-a1b2c3");
  }

  @Test
  void namesTheNodeDoesNotCarryAreIgnoredWithoutAWrite() throws Exception {
    createNode(Map.of("cpu", "4", "akri.sh/kept", "1"), Map.of("cpu", "4", "akri.sh/kept", "1"));
    String before = client.nodes().withName(NODE).get().getMetadata().getResourceVersion();

    Set<String> removed =
        new NodeTidier(client, NODE).removeResources(List.of("akri.sh/gone", "akri.sh/also-gone"));

    assertThat(removed).isEmpty();
    Node node = client.nodes().withName(NODE).get();
    assertThat(node.getMetadata().getResourceVersion()).isEqualTo(before);
    assertThat(node.getStatus().getCapacity()).containsOnlyKeys("cpu", "akri.sh/kept");
  }

  @Test
  void aNamePresentOnlyInCapacityIsRemovedFromCapacityAlone() throws Exception {
    createNode(Map.of("cpu", "4", "akri.sh/half", "0"), Map.of("cpu", "4"));

    Set<String> removed = new NodeTidier(client, NODE).removeResources(List.of("akri.sh/half"));

    assertThat(removed).containsExactly("akri.sh/half");
    Node node = client.nodes().withName(NODE).get();
    assertThat(node.getStatus().getCapacity()).containsOnlyKeys("cpu");
    assertThat(node.getStatus().getAllocatable()).containsOnlyKeys("cpu");
  }

  @Test
  void removingTwiceIsANoOp() throws Exception {
    createNode(Map.of("akri.sh/once", "0"), Map.of("akri.sh/once", "0"));
    NodeTidier tidier = new NodeTidier(client, NODE);

    assertThat(tidier.removeResources(List.of("akri.sh/once"))).containsExactly("akri.sh/once");
    assertThat(tidier.removeResources(List.of("akri.sh/once"))).isEmpty();
    assertThat(client.nodes().withName(NODE).get().getStatus().getCapacity()).isEmpty();
  }

  @Test
  void sweepRemovesOnlyAkriKeysThatAreNoLongerServed() throws Exception {
    createNode(
        Map.of(
            "cpu", "4",
            "akri.sh/served-1", "1",
            "akri.sh/stale-1", "0",
            "akri.sh/stale-2", "0",
            "example.com/widget", "0"),
        Map.of(
            "cpu", "4", "akri.sh/served-1", "1", "akri.sh/stale-1", "0", "akri.sh/only-here", "0"));

    Set<String> removed = new NodeTidier(client, NODE).sweep(Set.of("akri.sh/served-1")::contains);

    assertThat(removed)
        .containsExactlyInAnyOrder("akri.sh/stale-1", "akri.sh/stale-2", "akri.sh/only-here");
    Node node = client.nodes().withName(NODE).get();
    assertThat(node.getStatus().getCapacity())
        .containsOnlyKeys("cpu", "akri.sh/served-1", "example.com/widget");
    assertThat(node.getStatus().getAllocatable()).containsOnlyKeys("cpu", "akri.sh/served-1");
  }

  @Test
  void sweepOfATidyNodeRemovesNothing() throws Exception {
    createNode(
        Map.of("cpu", "4", "akri.sh/served", "1"), Map.of("cpu", "4", "akri.sh/served", "1"));

    assertThat(new NodeTidier(client, NODE).sweep(name -> name.equals("akri.sh/served"))).isEmpty();
  }

  @Test
  void aMissingNodeIsAClearErrorNamingTheNode() {
    assertThatThrownBy(() -> new NodeTidier(client, "no-such-node").sweep(name -> false))
        .isInstanceOf(NodeTidier.TidyException.class)
        .hasMessageContaining("Node(no-such-node)")
        .hasMessageContaining("does not exist");
  }

  @Test
  void aNodeWithoutStatusHasNothingToTidy() throws Exception {
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(NODE).endMetadata().build())
        .create();

    assertThat(new NodeTidier(client, NODE).removeResources(List.of("akri.sh/x"))).isEmpty();
  }

  private void createNode(Map<String, String> capacity, Map<String, String> allocatable) {
    client
        .nodes()
        .resource(
            new NodeBuilder()
                .withNewMetadata()
                .withName(NODE)
                .endMetadata()
                .withNewStatus()
                .withCapacity(quantities(capacity))
                .withAllocatable(quantities(allocatable))
                .endStatus()
                .build())
        .create();
  }

  private static Map<String, Quantity> quantities(Map<String, String> values) {
    Map<String, Quantity> out = new LinkedHashMap<>();
    values.forEach((k, v) -> out.put(k, new Quantity(v)));
    return out;
  }
}
