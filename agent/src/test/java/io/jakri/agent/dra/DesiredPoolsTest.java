package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import io.jakri.handler.DiscoveredDevice;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class DesiredPoolsTest {

  static final String NODE = "n1";
  static final ConfigurationSpec CFG =
      new ConfigurationSpec(
          "cfg", "made-up", "", List.of(), 4, Map.of("ADDED", "by-cfg"), Optional.empty());

  final DesiredPools pools = new DesiredPools(NODE);
  final Map<String, Instance> stored = new HashMap<>();

  static LocalDevice local(String instance, boolean online, Map<String, String> properties) {
    return new LocalDevice(instance, CFG, DiscoveredDevice.of(instance, properties, false), online);
  }

  Instance store(Instance instance) {
    stored.put(instance.name(), instance);
    return instance;
  }

  static Instance instance(String name, boolean shared, List<String> nodes, SlotUsage... usage) {
    Map<String, SlotUsage> slots = new HashMap<>();
    for (int i = 0; i < usage.length; i++) {
      slots.put(InstanceNames.slotId(name, i), usage[i]);
    }
    return Instance.create(name, "cfg", usage.length, shared, nodes.get(0), Map.of("ADDED", "x"))
        .withNodes(new TreeSet<>(nodes))
        .withUsage(slots);
  }

  static List<String> slots(DesiredPools.Desired desired) {
    return desired.devices().stream().map(PoolDevice::slot).toList();
  }

  @Test
  void theNodePoolHasTheFreeSlotsAndThoseClaimedHereOfUnsharedDevicesOnlineAndStored()
      throws Exception {
    store(
        instance(
            "b",
            false,
            List.of(NODE),
            SlotUsage.Free.INSTANCE,
            new SlotUsage.NodeUse(NODE),
            new SlotUsage.ClaimUse("uid-1", NODE),
            new SlotUsage.ClaimUse("uid-2", "n2")));
    store(instance("a", false, List.of(NODE), SlotUsage.Free.INSTANCE));
    store(instance("off", false, List.of(NODE), SlotUsage.Free.INSTANCE));
    store(instance("sh", true, List.of(NODE), SlotUsage.Free.INSTANCE));
    List<LocalDevice> devices =
        List.of(
            local("b", true, Map.of()),
            local("a", true, Map.of()),
            local("off", false, Map.of()),
            local("sh", true, Map.of()),
            local("not-stored", true, Map.of()));

    DesiredPools.Desired desired =
        pools.nodePool("cfg", devices, name -> Optional.ofNullable(stored.get(name)));

    // by Instance name, then slot order; the other node's claim and the device-plugin use left out
    assertThat(slots(desired)).containsExactly("a-0", "b-0", "b-2");
    PoolDevice first = desired.devices().get(0);
    assertThat(first.name()).isEqualTo(DraNames.device("a-0"));
    assertThat(first.instance()).isEqualTo("a");
    assertThat(first.nodes()).isEmpty();
    assertThat(first.attributes().get("akri.sh/handler").getString()).isEqualTo("made-up");
    assertThat(first.attributes().get("akri.sh/shared").getBool()).isFalse();
    assertThat(desired.problems()).isEmpty();
  }

  @Test
  void theNodePoolReportsPropertiesDraCannotCarry() throws Exception {
    store(instance("a", false, List.of(NODE), SlotUsage.Free.INSTANCE, SlotUsage.Free.INSTANCE));
    DesiredPools.Desired desired =
        pools.nodePool(
            "cfg",
            List.of(local("a", true, Map.of("bad.name", "x", "GOOD", "y"))),
            name -> Optional.ofNullable(stored.get(name)));
    assertThat(desired.devices()).hasSize(2);
    assertThat(desired.devices().get(0).attributes()).containsKey("property.akri.sh/GOOD");
    // once per slot: the publisher logs each distinct line once
    assertThat(desired.problems()).hasSize(2).allMatch(p -> p.startsWith("property bad.name"));
  }

  @Test
  void theSharedPoolHasEverySlotFreeOrClaimedAnywhereWithTheNodesThatSeeTheDevice() {
    Instance seenHere =
        instance(
            "a",
            true,
            List.of(NODE, "n2"),
            SlotUsage.Free.INSTANCE,
            new SlotUsage.ClaimUse("uid", "n2"),
            new SlotUsage.NodeUse("n2"));
    Instance elsewhere = instance("b", true, List.of("n2", "n3"), SlotUsage.Free.INSTANCE);
    Optional<DesiredPools.Desired> desired =
        pools.sharedPool(
            "cfg", List.of(seenHere, elsewhere), List.of(local("a", true, Map.of("P", "here"))));

    assertThat(desired).isPresent();
    assertThat(slots(desired.get())).containsExactly("a-0", "a-1", "b-0");
    PoolDevice a0 = desired.get().devices().get(0);
    assertThat(a0.nodes()).containsExactly(NODE, "n2");
    assertThat(a0.attributes().get("property.akri.sh/P").getString()).isEqualTo("here");
    assertThat(a0.attributes().get("akri.sh/shared").getBool()).isTrue();
    PoolDevice b0 = desired.get().devices().get(2);
    assertThat(b0.nodes()).containsExactly("n2", "n3");
    // not seen here: its Instance's properties without what the Configuration added
    assertThat(b0.attributes()).doesNotContainKey("property.akri.sh/ADDED");
    assertThat(b0.attributes().get("akri.sh/handler").getString()).isEqualTo("made-up");
  }

  @Test
  void aDeviceOfflineHereLeavesThisNodeOutOfItsSelectorAndGoesWhenNoNodeIsLeft() {
    Instance both = instance("a", true, List.of(NODE, "n2"), SlotUsage.Free.INSTANCE);
    Instance onlyHere = instance("b", true, List.of(NODE), SlotUsage.Free.INSTANCE);
    DesiredPools.Desired desired =
        pools
            .sharedPool(
                "cfg",
                List.of(both, onlyHere),
                List.of(local("a", false, Map.of()), local("b", false, Map.of())))
            .orElseThrow();
    assertThat(slots(desired)).containsExactly("a-0");
    assertThat(desired.devices().get(0).nodes()).containsExactly("n2");
  }

  @Test
  void withoutADeviceHereTheSharedPoolIsNotComputed() {
    Instance a = instance("a", true, List.of(NODE, "n2"), SlotUsage.Free.INSTANCE);
    assertThat(pools.sharedPool("cfg", List.of(a), List.of())).isEmpty();
  }

  @Test
  void theOwnerIsTheFirstNodeInNameOrderOfTheSharedInstances() {
    assertThat(
            DesiredPools.ownerOf(
                List.of(
                    instance("a", true, List.of("n3", "n4"), SlotUsage.Free.INSTANCE),
                    instance("b", true, List.of("n2", "n9"), SlotUsage.Free.INSTANCE))))
        .isEqualTo("n2");
    assertThat(DesiredPools.ownerOf(List.of())).isEmpty();
  }

  @Test
  void sharedInstancesAreThoseOfTheConfigurationSomeNodeSeesByName() {
    Instance b = instance("b", true, List.of("n2"), SlotUsage.Free.INSTANCE);
    Instance a = instance("a", true, List.of(NODE), SlotUsage.Free.INSTANCE);
    Instance unshared = instance("c", false, List.of(NODE), SlotUsage.Free.INSTANCE);
    Instance unseen = new Instance("d", "cfg", 1, true, new TreeSet<>(), Map.of(), Map.of(), 0);
    Instance other =
        new Instance("e", "other", 1, true, new TreeSet<>(List.of(NODE)), Map.of(), Map.of(), 0);
    assertThat(DesiredPools.sharedInstances("cfg", List.of(b, unshared, unseen, other, a)))
        .extracting(Instance::name)
        .containsExactly("a", "b");
  }
}
