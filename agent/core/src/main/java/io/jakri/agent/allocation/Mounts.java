package io.jakri.agent.allocation;

import io.jakri.agent.model.LocalDevice;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.DeviceSpec;
import io.jakri.kubelet.v1beta1.Mount;

/** Copies a device's mounts, device nodes and annotations into an Allocate response. */
final class Mounts {

  private Mounts() {}

  static void addDevice(ContainerAllocateResponse.Builder response, LocalDevice local) {
    for (DiscoveredDevice.Mount m : local.device().mounts()) {
      response.addMounts(
          Mount.newBuilder()
              .setContainerPath(m.containerPath())
              .setHostPath(m.hostPath())
              .setReadOnly(m.readOnly()));
    }
    for (DiscoveredDevice.DeviceSpec d : local.device().deviceSpecs()) {
      response.addDevices(
          DeviceSpec.newBuilder()
              .setContainerPath(d.containerPath())
              .setHostPath(d.hostPath())
              .setPermissions(d.permissions()));
    }
    response.putAllAnnotations(local.device().annotations());
  }
}
