package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Slot rule 2: an Instance created again after a deletion gets back the claims it carried. */
class DeletedClaimsTest {

  private static Instance x(String name, List<String> nodes, Map<String, SlotUsage> usage) {
    return new Instance(name, "x", 3, true, new TreeSet<>(nodes), usage, Map.of(), 10);
  }

  private static CachedInstance last(Instance instance) {
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withResourceVersion(Long.toString(instance.version()))
            .build());
    resource.setSpec(InstanceResources.spec(instance));
    return new CachedInstance(instance, resource);
  }

  private static Instance fresh(String name) {
    return Instance.create(name, "x", 3, true, "n2", Map.of());
  }

  @Test
  void theDeletedClaimsFillOnlyTheSlotsTheNewInstanceLeavesFreeAndTheirHoldersJoinNodes() {
    Instance deleted =
        x(
            "x-aaaaaa",
            List.of("n1", "n3"),
            Map.of(
                "x-aaaaaa-0", new SlotUsage.NodeUse("n1"),
                "x-aaaaaa-1", new SlotUsage.ClassUse("x-aaaaaa-1", "n3")));
    Map<String, SlotUsage> mine = Map.of("x-aaaaaa-1", new SlotUsage.NodeUse("n2"));
    Instance again = fresh("x-aaaaaa").withUsage(mine);

    Instance restored = DeletedClaims.restore(again, deleted);

    assertThat(restored.deviceUsage())
        .containsEntry("x-aaaaaa-0", new SlotUsage.NodeUse("n1"))
        .containsEntry("x-aaaaaa-1", new SlotUsage.NodeUse("n2"))
        .containsEntry("x-aaaaaa-2", SlotUsage.Free.INSTANCE);
    assertThat(restored.nodes()).containsExactly("n1", "n2");
    // Nothing to restore: the very Instance comes back.
    assertThat(DeletedClaims.restore(again, fresh("x-aaaaaa"))).isSameAs(again);
  }

  @Test
  void onlyADeletedStateThatHeldSlotsIsRememberedAndTakingItForgetsIt() {
    DeletedClaims deletedClaims = new DeletedClaims();
    deletedClaims.remember("x-aaaaaa", last(fresh("x-aaaaaa")));
    deletedClaims.remember(
        "x-bbbbbb",
        last(x("x-bbbbbb", List.of("n1"), Map.of("x-bbbbbb-2", new SlotUsage.NodeUse("n1")))));

    assertThat(deletedClaims.take("x-aaaaaa")).isNull();
    Instance again = fresh("x-bbbbbb");
    assertThat(deletedClaims.restore(again).deviceUsage().get("x-bbbbbb-2"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
    // Restoring keeps it (a create may fail and be retried); taking it forgets it.
    assertThat(deletedClaims.take("x-bbbbbb")).isNotNull();
    assertThat(deletedClaims.restore(again)).isSameAs(again);
    assertThat(deletedClaims.take("x-bbbbbb")).isNull();
  }

  @Test
  void beyondItsCapacityTheEldestAreForgottenFirst() {
    DeletedClaims deletedClaims = new DeletedClaims(2);
    for (String name : List.of("x-aaaaaa", "x-bbbbbb", "x-cccccc")) {
      deletedClaims.remember(
          name, last(x(name, List.of("n1"), Map.of(name + "-0", new SlotUsage.NodeUse("n1")))));
    }

    assertThat(deletedClaims.take("x-aaaaaa")).isNull();
    assertThat(deletedClaims.take("x-bbbbbb")).isNotNull();
    assertThat(deletedClaims.take("x-cccccc")).isNotNull();
    assertThat(DeletedClaims.MAX_KEPT).isEqualTo(256);
  }
}
