package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@link NodeTidier} on the real API server, on the agent's own ServiceAccount token bound by
 * {@code agent/rbac/agent-rbac.yaml} (its {@code jakri-agent-node-tidy} rules: get Nodes, patch
 * {@code nodes/status}); each test has a Node of its own, created by the admin (its status through
 * the status subresource, as the kubelet writes it: a real server drops status from a create).
 */
@ExtendWith(RealKube.class)
class NodeTidierIT {

  /** The admin, for set-up and checks. */
  KubernetesClient client;

  /** The agent's client: what NodeTidier runs with. */
  KubernetesClient agent;

  String nodeName;

  @BeforeEach
  void setUp(RealApiServer api) {
    RealApiPeer.installCrdsAndRbac(api);
    client = api.admin();
    agent = api.serviceAccountClient("default", "jakri-agent");
    nodeName = "tidier-" + java.util.UUID.randomUUID().toString().substring(0, 8);
  }

  @AfterEach
  void tearDown() {
    client.nodes().withName(nodeName).delete();
  }

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
        new NodeTidier(agent, nodeName)
            .removeResources(List.of("akri.sh/echo-8120fe", "akri.sh/echo"));

    assertThat(removed).containsExactlyInAnyOrder("akri.sh/echo-8120fe", "akri.sh/echo");
    Node node = client.nodes().withName(nodeName).get();
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
    String before = client.nodes().withName(nodeName).get().getMetadata().getResourceVersion();

    Set<String> removed =
        new NodeTidier(agent, nodeName)
            .removeResources(List.of("akri.sh/gone", "akri.sh/also-gone"));

    assertThat(removed).isEmpty();
    Node node = client.nodes().withName(nodeName).get();
    assertThat(node.getMetadata().getResourceVersion()).isEqualTo(before);
    assertThat(node.getStatus().getCapacity()).containsOnlyKeys("cpu", "akri.sh/kept");
  }

  @Test
  void aNamePresentOnlyInCapacityIsRemovedFromCapacityAlone() throws Exception {
    createNode(Map.of("cpu", "4", "akri.sh/half", "0"), Map.of("cpu", "4"));

    Set<String> removed = new NodeTidier(agent, nodeName).removeResources(List.of("akri.sh/half"));

    assertThat(removed).containsExactly("akri.sh/half");
    Node node = client.nodes().withName(nodeName).get();
    assertThat(node.getStatus().getCapacity()).containsOnlyKeys("cpu");
    assertThat(node.getStatus().getAllocatable()).containsOnlyKeys("cpu");
  }

  @Test
  void removingTwiceIsANoOp() throws Exception {
    createNode(Map.of("akri.sh/once", "0"), Map.of("akri.sh/once", "0"));
    NodeTidier tidier = new NodeTidier(agent, nodeName);

    assertThat(tidier.removeResources(List.of("akri.sh/once"))).containsExactly("akri.sh/once");
    assertThat(tidier.removeResources(List.of("akri.sh/once"))).isEmpty();
    assertThat(client.nodes().withName(nodeName).get().getStatus().getCapacity()).isEmpty();
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

    Set<String> removed =
        new NodeTidier(agent, nodeName).sweep(Set.of("akri.sh/served-1")::contains);

    assertThat(removed)
        .containsExactlyInAnyOrder("akri.sh/stale-1", "akri.sh/stale-2", "akri.sh/only-here");
    Node node = client.nodes().withName(nodeName).get();
    assertThat(node.getStatus().getCapacity())
        .containsOnlyKeys("cpu", "akri.sh/served-1", "example.com/widget");
    assertThat(node.getStatus().getAllocatable()).containsOnlyKeys("cpu", "akri.sh/served-1");
  }

  @Test
  void sweepOfATidyNodeRemovesNothing() throws Exception {
    createNode(
        Map.of("cpu", "4", "akri.sh/served", "1"), Map.of("cpu", "4", "akri.sh/served", "1"));

    assertThat(new NodeTidier(agent, nodeName).sweep(name -> name.equals("akri.sh/served")))
        .isEmpty();
  }

  @Test
  void aMissingNodeIsAClearErrorNamingTheNode() {
    assertThatThrownBy(() -> new NodeTidier(agent, "no-such-node").sweep(name -> false))
        .isInstanceOf(NodeTidier.TidyException.class)
        .hasMessageContaining("Node(no-such-node)")
        .hasMessageContaining("does not exist");
  }

  @Test
  void aNodeWithoutStatusHasNothingToTidy() throws Exception {
    client
        .nodes()
        .resource(new NodeBuilder().withNewMetadata().withName(nodeName).endMetadata().build())
        .create();

    assertThat(new NodeTidier(agent, nodeName).removeResources(List.of("akri.sh/x"))).isEmpty();
  }

  private void createNode(Map<String, String> capacity, Map<String, String> allocatable) {
    Node created =
        client
            .nodes()
            .resource(new NodeBuilder().withNewMetadata().withName(nodeName).endMetadata().build())
            .create();
    created.setStatus(
        new io.fabric8.kubernetes.api.model.NodeStatusBuilder()
            .withCapacity(quantities(capacity))
            .withAllocatable(quantities(allocatable))
            .build());
    client.nodes().resource(created).updateStatus();
  }

  private static Map<String, Quantity> quantities(Map<String, String> values) {
    Map<String, Quantity> out = new LinkedHashMap<>();
    values.forEach((k, v) -> out.put(k, new Quantity(v)));
    return out;
  }
}
