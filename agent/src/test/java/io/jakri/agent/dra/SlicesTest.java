package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttributeBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class SlicesTest {

  static List<PoolDevice> devices(int n, List<String> nodes) {
    List<PoolDevice> list = new ArrayList<>();
    for (int i = 0; i < n; i++) {
      list.add(
          new PoolDevice(
              "d-" + i,
              "inst",
              "inst-" + i,
              Map.of("akri.sh/slot", new DeviceAttributeBuilder().withInt((long) i).build()),
              nodes));
    }
    return list;
  }

  @Test
  void devicesAreCutIntoSlicesOfAtMostTheDraLimit() {
    int max = ResourceSlicePublisher.MAX_DEVICES_PER_SLICE;
    assertThat(Slices.count(0)).isZero();
    assertThat(Slices.count(1)).isEqualTo(1);
    assertThat(Slices.count(max)).isEqualTo(1);
    assertThat(Slices.count(max + 1)).isEqualTo(2);
    List<PoolDevice> all = devices(max + 3, List.of());
    assertThat(Slices.part(all, 0)).hasSize(max).startsWith(all.get(0));
    assertThat(Slices.part(all, 1)).containsExactlyElementsOf(all.subList(max, max + 3));
  }

  @Test
  void aNodePoolsSliceNamesItsNodeAndCarriesThePoolsGeneration() {
    List<PoolDevice> part = devices(2, List.of());
    ResourceSlice slice = Slices.slice("n1", "cfg", "n1-cfg", false, 1, 7, 3, part);
    assertThat(slice.getMetadata().getName()).isEqualTo(DraNames.slice("n1-cfg", 1));
    assertThat(slice.getMetadata().getLabels())
        .containsEntry(ResourceSlicePublisher.MANAGED_BY, ResourceSlicePublisher.MANAGER)
        .containsEntry(ResourceSlicePublisher.CONFIGURATION_LABEL, "cfg");
    assertThat(slice.getSpec().getDriver()).isEqualTo(DraNames.DRIVER);
    assertThat(slice.getSpec().getNodeName()).isEqualTo("n1");
    assertThat(slice.getSpec().getPerDeviceNodeSelection()).isNull();
    assertThat(slice.getSpec().getPool().getName()).isEqualTo("n1-cfg");
    assertThat(slice.getSpec().getPool().getGeneration()).isEqualTo(7L);
    assertThat(slice.getSpec().getPool().getResourceSliceCount()).isEqualTo(3L);
    assertThat(slice.getSpec().getDevices())
        .extracting(d -> d.getName())
        .containsExactly("d-0", "d-1");
    assertThat(slice.getSpec().getDevices().get(1).getAttributes().get("akri.sh/slot").getInt())
        .isEqualTo(1L);
    assertThat(slice.getSpec().getDevices().get(0).getNodeSelector()).isNull();
  }

  @Test
  void aSharedPoolsSliceSelectsTheNodesOfEachDevice() {
    ResourceSlice slice =
        Slices.slice("n1", "cfg", "cfg-shared", true, 0, 1, 1, devices(1, List.of("n1", "n2")));
    assertThat(slice.getSpec().getNodeName()).isNull();
    assertThat(slice.getSpec().getPerDeviceNodeSelection()).isTrue();
    NodeSelectorRequirement field =
        slice
            .getSpec()
            .getDevices()
            .get(0)
            .getNodeSelector()
            .getNodeSelectorTerms()
            .get(0)
            .getMatchFields()
            .get(0);
    assertThat(field.getKey()).isEqualTo("metadata.name");
    assertThat(field.getOperator()).isEqualTo("In");
    assertThat(field.getValues()).containsExactly("n1", "n2");
  }

  @Test
  void aConfigurationNameTooLongForALabelValueIsNotLabelled() {
    String longName = "c".repeat(64);
    ResourceSlice slice =
        Slices.slice("n1", longName, "pool", false, 0, 1, 1, devices(1, List.of()));
    assertThat(slice.getMetadata().getLabels()).containsOnlyKeys(ResourceSlicePublisher.MANAGED_BY);
  }

  @Test
  void aSlicesIndexIsTheNumberItsNameEndsWith() {
    assertThat(Slices.indexOf(DraNames.slice("n1-cfg", 12))).isEqualTo(12);
    assertThat(Slices.indexOf("no-number")).isEqualTo(Integer.MAX_VALUE);
  }

  @Test
  void theDeviceClassSelectsTheConfigurationsDevicesOfTheDriver() {
    DeviceClass cls = Slices.deviceClass("cfg");
    assertThat(cls.getMetadata().getName()).isEqualTo(DraNames.deviceClass("cfg"));
    assertThat(cls.getMetadata().getLabels())
        .containsEntry(ResourceSlicePublisher.MANAGED_BY, ResourceSlicePublisher.MANAGER);
    assertThat(cls.getSpec().getSelectors().get(0).getCel().getExpression())
        .isEqualTo(
            "device.driver == \"akri.sh\" && device.attributes[\"akri.sh\"].configuration =="
                + " \"cfg\"")
        .isEqualTo(ResourceSlicePublisher.selector("cfg"));
  }
}
