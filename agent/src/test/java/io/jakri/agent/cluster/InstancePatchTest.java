package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** The JSON patch a write of only slots and nodes sends. */
class InstancePatchTest {

  private static Instance cams(Map<String, SlotUsage> usage) {
    return new Instance(
        "cams-8120fe",
        "cams",
        3,
        false,
        new TreeSet<>(List.of("n1")),
        usage,
        Map.of("IP", "10.0.0.1"),
        41);
  }

  private static CachedInstance cached(Instance instance) {
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withResourceVersion(Long.toString(instance.version()))
            .build());
    resource.setSpec(InstanceResources.spec(instance));
    return new CachedInstance(instance, resource);
  }

  @Test
  void aClaimIsWrittenAsAPatchOfItsSlotThatPinsTheResourceVersionItWasComputedFrom() {
    Instance base = cams(Map.of("cams-8120fe-0", new SlotUsage.NodeUse("n2")));
    Map<String, SlotUsage> usage = new LinkedHashMap<>(base.deviceUsage());
    usage.put("cams-8120fe-1", new SlotUsage.NodeUse("n1"));
    usage.put("cams-8120fe-0", SlotUsage.Free.INSTANCE);

    List<Map<String, Object>> ops =
        InstancePatch.patchOps(cached(base), base.withUsage(usage)).orElseThrow();

    assertThat(ops)
        .containsExactly(
            Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", "41"),
            Map.of("op", "add", "path", "/spec/deviceUsage/cams-8120fe-0", "value", ""),
            Map.of("op", "add", "path", "/spec/deviceUsage/cams-8120fe-1", "value", "n1"));
  }

  @Test
  void aJoinIsWrittenAsAPatchOfTheNodeList() {
    Instance base = cams(Map.of());

    List<Map<String, Object>> ops =
        InstancePatch.patchOps(cached(base), base.withNodes(new TreeSet<>(List.of("n1", "n0"))))
            .orElseThrow();

    assertThat(ops)
        .containsExactly(
            Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", "41"),
            Map.of("op", "add", "path", "/spec/nodes", "value", List.of("n0", "n1")));
  }

  @Test
  void changesBeyondSlotsAndNodesAreWrittenAsAWholeReplacement() {
    Instance base = cams(Map.of());

    assertThat(InstancePatch.patchOps(cached(base), base.withSpec(2, Map.of("IP", "x")))).isEmpty();
    assertThat(InstancePatch.patchOps(cached(base), base.withSpec(3, Map.of("IP", "10.0.0.2"))))
        .isEmpty();
    // A resource whose usage keys differ from the slots (written by someone else) is replaced
    // whole, so the stray keys go.
    CachedInstance odd = cached(base);
    odd.resource().getSpec().getDeviceUsage().put("cams-8120fe-7", "n9");
    assertThat(InstancePatch.patchOps(odd, base)).isEmpty();
  }
}
