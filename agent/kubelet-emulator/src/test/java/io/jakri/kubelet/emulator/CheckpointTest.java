package io.jakri.kubelet.emulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Base64;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class CheckpointTest {

  @Test
  void writesPodDeviceEntriesAndRegisteredDevicesInTheKubeletsShape(@TempDir Path dir)
      throws Exception {
    ContainerAllocateResponse response =
        ContainerAllocateResponse.newBuilder().putEnvs("DEVICE", "c1").build();
    Pod pod = Pod.of("media", "viewer", Container.of("main", "akri.sh/camera", 1));
    PodAdmission admission =
        new PodAdmission(
            "media",
            "viewer",
            Map.of(
                "main",
                ContainerAllocation.merge(
                    Map.of("akri.sh/camera", List.of("c1")), Map.of("akri.sh/camera", response))));
    AdmittedPod admitted =
        new AdmittedPod(pod, admission, Map.of("main", Map.of("akri.sh/camera", response)));

    Checkpoint.write(
        dir, Checkpoint.json(List.of(admitted), Map.of("akri.sh/camera", List.of("c1", "c\"2"))));

    String json = Files.readString(dir.resolve(KubeletEmulator.CHECKPOINT_FILE));
    String encoded = Base64.getEncoder().encodeToString(response.toByteArray());
    assertThat(json)
        .isEqualTo(
            "{\"Data\":{\"PodDeviceEntries\":[{\"PodUID\":\"media/viewer\",\"ContainerName\":"
                + "\"main\",\"ResourceName\":\"akri.sh/camera\",\"DeviceIDs\":{\"-1\":[\"c1\"]},"
                + "\"AllocResp\":\""
                + encoded
                + "\"}],\"RegisteredDevices\":{\"akri.sh/camera\":[\"c1\",\"c\\\"2\"]}},"
                + "\"Checksum\":0}");
    assertThat(dir.resolve(KubeletEmulator.CHECKPOINT_FILE + ".tmp")).doesNotExist();
  }
}
