package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.jakri.agent.instance.Instance;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class NodeLabelsTest {

  static Instance instance(String name, String configuration, String... nodes) {
    return new Instance(
        name, configuration, 1, true, new TreeSet<>(List.of(nodes)), Map.of(), Map.of(), 0);
  }

  static Node node(Map<String, String> labels, Map<String, String> annotations) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName("n1")
        .withLabels(new HashMap<>(labels))
        .withAnnotations(new HashMap<>(annotations))
        .endMetadata()
        .build();
  }

  @Test
  void eachConfigurationWithInstancesOnThisNodeIsCounted() {
    assertThat(
            NodeLabels.wanted(
                List.of(
                    instance("cams-1", "cams", "n1"),
                    instance("cams-2", "cams", "n1", "n2"),
                    instance("cams-3", "cams", "n2"),
                    instance("plc-1", "plcs", "n1"),
                    instance("usb-1", "usb", "n2")),
                "n1"))
        .containsExactly(Map.entry("akri.sh/cams", "2"), Map.entry("akri.sh/plcs", "1"));
  }

  @Test
  void onlyTheDifferenceIsPatchedAndOnlyOwnLabelsAreRemoved() {
    Node node =
        node(
            Map.of(
                "akri.sh/cams", "2",
                "akri.sh/gone", "1",
                "akri.sh/users-own", "yes",
                "team", "a"),
            Map.of(NodeLabels.OWNED, "akri.sh/cams,akri.sh/gone"));
    Map<String, Object> patch = NodeLabels.patch(node, Map.of("akri.sh/cams", "3"));
    Map<String, Object> labels = new HashMap<>();
    labels.put("akri.sh/cams", "3");
    labels.put("akri.sh/gone", null);
    assertThat(patch)
        .isEqualTo(
            Map.of(
                "metadata",
                Map.of("labels", labels, "annotations", Map.of(NodeLabels.OWNED, "akri.sh/cams"))));
  }

  @Test
  void nothingToChangeIsNoPatch() {
    Node node = node(Map.of("akri.sh/cams", "2"), Map.of(NodeLabels.OWNED, "akri.sh/cams"));
    assertThat(NodeLabels.patch(node, Map.of("akri.sh/cams", "2"))).isEmpty();
  }

  @Test
  void theLastLabelGoneRemovesTheAnnotationToo() {
    Node node = node(Map.of("akri.sh/cams", "1"), Map.of(NodeLabels.OWNED, "akri.sh/cams"));
    Map<String, Object> labels = new HashMap<>();
    labels.put("akri.sh/cams", null);
    Map<String, Object> annotations = new HashMap<>();
    annotations.put(NodeLabels.OWNED, null);
    assertThat(NodeLabels.patch(node, Map.of()))
        .isEqualTo(Map.of("metadata", Map.of("labels", labels, "annotations", annotations)));
  }

  @Test
  void aLabelOfTheSameKeyThatItDidNotSetIsLeftUntilItIsWanted() {
    Node node = node(Map.of("akri.sh/cams", "users"), Map.of());
    assertThat(NodeLabels.patch(node, Map.of())).isEmpty();
  }
}
