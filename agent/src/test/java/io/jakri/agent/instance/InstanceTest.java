package io.jakri.agent.instance;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class InstanceTest {

  private static Instance instance(int capacity, Map<String, SlotUsage> usage) {
    return new Instance(
        "cams-8120fe", "cams", capacity, false, new TreeSet<>(List.of("n1")), usage, Map.of(), 5);
  }

  @Test
  void slotsAreExactlyTheCapacityInNumericOrderWithMissingOnesFree() {
    Instance i = instance(12, Map.of("cams-8120fe-10", new SlotUsage.NodeUse("n1")));

    assertThat(i.deviceUsage().keySet())
        .containsExactly(
            "cams-8120fe-0",
            "cams-8120fe-1",
            "cams-8120fe-2",
            "cams-8120fe-3",
            "cams-8120fe-4",
            "cams-8120fe-5",
            "cams-8120fe-6",
            "cams-8120fe-7",
            "cams-8120fe-8",
            "cams-8120fe-9",
            "cams-8120fe-10",
            "cams-8120fe-11");
    assertThat(i.deviceUsage().get("cams-8120fe-10")).isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(i.deviceUsage().get("cams-8120fe-3")).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(i.deviceUsage()).doesNotContainKey("cams-8120fe-12");
  }

  @Test
  void copiesKeepingNameAndCapacityShareTheSlotMapInsteadOfRebuildingIt() {
    Instance i = instance(3, Map.of("cams-8120fe-1", new SlotUsage.NodeUse("n1")));

    assertThat(i.withVersion(9).deviceUsage()).isSameAs(i.deviceUsage());
    assertThat(i.withNodes(new TreeSet<>(List.of("n1", "n2"))).deviceUsage())
        .isSameAs(i.deviceUsage());
    assertThat(i.withSpec(3, Map.of("IP", "10.0.0.1")).deviceUsage()).isSameAs(i.deviceUsage());
    assertThat(i.withSpec(2, Map.of()).deviceUsage().keySet())
        .containsExactly("cams-8120fe-0", "cams-8120fe-1");
  }

  @Test
  void theSlotMapCannotBeChangedAndEqualsAnyMapWithTheSameEntries() {
    Instance i = instance(2, Map.of());
    Map<String, SlotUsage> plain = new LinkedHashMap<>(i.deviceUsage());

    assertThat(i.deviceUsage()).isEqualTo(plain).hasSameHashCodeAs(plain);
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () -> i.deviceUsage().put("cams-8120fe-0", new SlotUsage.NodeUse("x")))
        .isInstanceOf(UnsupportedOperationException.class);
    org.assertj.core.api.Assertions.assertThatThrownBy(() -> i.deviceUsage().entrySet().clear())
        .isInstanceOf(UnsupportedOperationException.class);
  }

  @Test
  void sameContentIgnoresOnlyTheVersion() {
    Instance i = instance(2, Map.of());
    Map<String, SlotUsage> claimed = new LinkedHashMap<>(i.deviceUsage());
    claimed.put("cams-8120fe-0", new SlotUsage.NodeUse("n1"));

    assertThat(i.sameContent(i.withVersion(77))).isTrue();
    assertThat(i.sameContent(i.withUsage(claimed))).isFalse();
    assertThat(i.sameContent(i.withNodes(new TreeSet<>(List.of("n2"))))).isFalse();
    assertThat(i.sameContent(i.withSpec(2, Map.of("k", "v")))).isFalse();
    assertThat(i.withUsage(claimed).withVersion(5)).isEqualTo(instance(2, claimed));
  }
}
