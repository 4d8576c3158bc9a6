package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceSpec;
import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** Conversions between the agent's Instance and the resource, in Akri's wire format. */
class InstanceResourcesTest {

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

    InstanceSpec spec = InstanceResources.spec(instance);
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
    assertThat(InstanceResources.toInstance(resource)).isEqualTo(instance);
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

    Instance read = InstanceResources.toInstance(resource);

    assertThat(read.deviceUsage())
        .containsEntry("cams-aaaaaa-0", SlotUsage.Free.INSTANCE)
        .containsEntry("cams-aaaaaa-1", new SlotUsage.NodeUse("n1"));
    assertThat(read.version()).isEqualTo(7);
  }
}
