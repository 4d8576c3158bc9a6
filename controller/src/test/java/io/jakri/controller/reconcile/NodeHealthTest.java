package io.jakri.controller.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;

class NodeHealthTest {

  static final Instant T = Instant.parse("2026-01-01T00:00:00Z");

  static Node node(String name, String ready) {
    return new NodeBuilder()
        .withNewMetadata()
        .withName(name)
        .endMetadata()
        .withNewStatus()
        .addNewCondition()
        .withType("Ready")
        .withStatus(ready)
        .withLastTransitionTime(T.toString())
        .endCondition()
        .endStatus()
        .build();
  }

  final Map<String, Node> nodes =
      Map.of(
          "ready", node("ready", "True"),
          "down", node("down", "False"),
          "unknown", node("unknown", "Unknown"),
          "fresh", new NodeBuilder().withNewMetadata().withName("fresh").endMetadata().build());
  final NodeHealth health =
      new NodeHealth(n -> Optional.ofNullable(nodes.get(n)), Duration.ofMinutes(5));

  @Test
  void aReadyOrUnreportedNodeIsKept() {
    assertThat(health.evictionTime("ready")).isEmpty();
    assertThat(health.evictionTime("fresh")).isEmpty();
  }

  @Test
  void aGoneNodeIsEvictedAtOnce() {
    assertThat(health.evictionTime("gone")).contains(Instant.MIN);
  }

  @Test
  void aNotReadyOrUnknownNodeIsEvictedWhenTheGraceEnds() {
    assertThat(health.evictionTime("down")).contains(T.plus(Duration.ofMinutes(5)));
    assertThat(health.evictionTime("unknown")).contains(T.plus(Duration.ofMinutes(5)));
  }

  @Test
  void slotsHeldByANodeDirectlyOrThroughAClassAreRecognised() {
    Set<String> gone = Set.of("n2");
    assertThat(InstanceReconciler.heldByAny("n2", gone)).isTrue();
    assertThat(InstanceReconciler.heldByAny("C:3:n2", gone)).isTrue();
    assertThat(InstanceReconciler.heldByAny("n22", gone)).isFalse();
    assertThat(InstanceReconciler.heldByAny("C:3:n1", gone)).isFalse();
    assertThat(InstanceReconciler.heldByAny("", gone)).isFalse();
  }

  @Test
  void aMalformedUsageIsHeldByNoOneAndSoLeftAsItIs() {
    assertThat(InstanceReconciler.heldByAny("C:", Set.of("n2"))).isFalse();
    assertThat(InstanceReconciler.heldByAny("C:3:", Set.of(""))).isFalse();
  }
}
