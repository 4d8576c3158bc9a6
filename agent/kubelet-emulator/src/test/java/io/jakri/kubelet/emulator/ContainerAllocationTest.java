package io.jakri.kubelet.emulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.kubelet.v1beta1.CDIDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.DeviceSpec;
import io.jakri.kubelet.v1beta1.Mount;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ContainerAllocationTest {

  @Test
  void mergeKeepsTheFirstValueForEachEnvAnnotationMountDeviceAndCdiName() {
    ContainerAllocateResponse first =
        ContainerAllocateResponse.newBuilder()
            .putEnvs("SHARED", "from-a")
            .putEnvs("A", "1")
            .putAnnotations("note", "a")
            .addMounts(Mount.newBuilder().setContainerPath("/data").setHostPath("/srv/a"))
            .addDevices(DeviceSpec.newBuilder().setContainerPath("/dev/x").setHostPath("/dev/a"))
            .addCdiDevices(CDIDevice.newBuilder().setName("v.example/d=1"))
            .build();
    ContainerAllocateResponse second =
        ContainerAllocateResponse.newBuilder()
            .putEnvs("SHARED", "from-b")
            .putEnvs("B", "2")
            .putAnnotations("note", "b")
            .addMounts(Mount.newBuilder().setContainerPath("/data").setHostPath("/srv/b"))
            .addMounts(
                Mount.newBuilder().setContainerPath("/cfg").setHostPath("/etc/b").setReadOnly(true))
            .addDevices(
                DeviceSpec.newBuilder()
                    .setContainerPath("/dev/y")
                    .setHostPath("/dev/b")
                    .setPermissions("r"))
            .addCdiDevices(CDIDevice.newBuilder().setName("v.example/d=1"))
            .build();
    Map<String, List<String>> ids = new LinkedHashMap<>();
    ids.put("akri.sh/a", List.of("a1"));
    ids.put("akri.sh/b", List.of("b1", "b2"));
    Map<String, ContainerAllocateResponse> responses = new LinkedHashMap<>();
    responses.put("akri.sh/a", first);
    responses.put("akri.sh/b", second);

    ContainerAllocation merged = ContainerAllocation.merge(ids, responses);

    assertThat(merged.deviceIds()).isEqualTo(ids);
    assertThat(merged.envs())
        .containsExactly(Map.entry("SHARED", "from-a"), Map.entry("A", "1"), Map.entry("B", "2"));
    assertThat(merged.annotations()).containsExactly(Map.entry("note", "a"));
    assertThat(merged.mounts())
        .containsExactly(
            new MountInfo("/data", "/srv/a", false), new MountInfo("/cfg", "/etc/b", true));
    assertThat(merged.devices())
        .containsExactly(
            new DeviceSpecInfo("/dev/x", "/dev/a", ""),
            new DeviceSpecInfo("/dev/y", "/dev/b", "r"));
    assertThat(merged.cdiDevices()).containsExactly("v.example/d=1");
  }

  @Test
  void deviceIdsOfAnUnallocatedResourceAreEmpty() {
    assertThat(ContainerAllocation.EMPTY.deviceIds("akri.sh/x")).isEmpty();
  }
}
