package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.SlotUsage;
import io.jakri.crd.InstanceSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class KubernetesInstanceStoreTest {

  @Test
  void anInstanceSurvivesTheRoundTripThroughTheResourceInAkrisWireFormat() {
    Instance instance =
        new Instance(
            "cams-8120fe",
            "cams",
            3,
            true,
            new TreeSet<>(List.of("n2", "n1")),
            Map.of(
                "cams-8120fe-0", new SlotUsage.NodeUse("n1"),
                "cams-8120fe-2", new SlotUsage.ClassUse("cams-8120fe-2", "n2")),
            Map.of("IP", "10.0.0.1"),
            41);

    InstanceSpec spec = KubernetesInstanceStore.spec(instance);
    assertThat(spec.getCdiName()).isEqualTo("akri.sh/cams=8120fe");
    assertThat(spec.getNodes()).containsExactly("n1", "n2");
    assertThat(spec.getDeviceUsage())
        .containsExactly(
            Map.entry("cams-8120fe-0", "n1"),
            Map.entry("cams-8120fe-1", ""),
            Map.entry("cams-8120fe-2", "C:cams-8120fe-2:n2"));

    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder().withName("cams-8120fe").withResourceVersion("41").build());
    resource.setSpec(spec);
    assertThat(KubernetesInstanceStore.toInstance(resource)).isEqualTo(instance);
  }

  @Test
  void malformedUsageWrittenBySomeoneElseReadsAsFreeInsteadOfBreakingTheCache() {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("cams");
    spec.setCapacity(2);
    Map<String, String> usage = new LinkedHashMap<>();
    usage.put("cams-aaaaaa-0", "C:broken");
    usage.put("cams-aaaaaa-1", "n1");
    spec.setDeviceUsage(usage);
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder().withName("cams-aaaaaa").withResourceVersion("7").build());
    resource.setSpec(spec);

    Instance read = KubernetesInstanceStore.toInstance(resource);

    assertThat(read.deviceUsage())
        .containsEntry("cams-aaaaaa-0", SlotUsage.Free.INSTANCE)
        .containsEntry("cams-aaaaaa-1", new SlotUsage.NodeUse("n1"));
    assertThat(read.version()).isEqualTo(7);
  }

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

  private static KubernetesInstanceStore.Cached cached(Instance instance) {
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withResourceVersion(Long.toString(instance.version()))
            .build());
    resource.setSpec(KubernetesInstanceStore.spec(instance));
    return new KubernetesInstanceStore.Cached(instance, resource);
  }

  @Test
  void aClaimIsWrittenAsAPatchOfItsSlotThatPinsTheResourceVersionItWasComputedFrom() {
    Instance base = cams(Map.of("cams-8120fe-0", new SlotUsage.NodeUse("n2")));
    Map<String, SlotUsage> usage = new LinkedHashMap<>(base.deviceUsage());
    usage.put("cams-8120fe-1", new SlotUsage.NodeUse("n1"));
    usage.put("cams-8120fe-0", SlotUsage.Free.INSTANCE);

    List<Map<String, Object>> ops =
        KubernetesInstanceStore.patchOps(cached(base), base.withUsage(usage)).orElseThrow();

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
        KubernetesInstanceStore.patchOps(
                cached(base), base.withNodes(new TreeSet<>(List.of("n1", "n0"))))
            .orElseThrow();

    assertThat(ops)
        .containsExactly(
            Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", "41"),
            Map.of("op", "add", "path", "/spec/nodes", "value", List.of("n0", "n1")));
  }

  @Test
  void changesBeyondSlotsAndNodesAreWrittenAsAWholeReplacement() {
    Instance base = cams(Map.of());

    assertThat(KubernetesInstanceStore.patchOps(cached(base), base.withSpec(2, Map.of("IP", "x"))))
        .isEmpty();
    assertThat(
            KubernetesInstanceStore.patchOps(
                cached(base), base.withSpec(3, Map.of("IP", "10.0.0.2"))))
        .isEmpty();
    // A resource whose usage keys differ from the slots (written by someone else) is replaced
    // whole, so the stray keys go.
    KubernetesInstanceStore.Cached odd = cached(base);
    odd.resource().getSpec().getDeviceUsage().put("cams-8120fe-7", "n9");
    assertThat(KubernetesInstanceStore.patchOps(odd, base)).isEmpty();
  }
}
