package io.jakri.agent.allocation;

import io.jakri.agent.discovery.LocalDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;

/**
 * What a container gets for a slot of an Instance resource {@code akri.sh/<instance>} (DESIGN §5):
 * every merged property {@code K=V} as {@code K} and {@code K_<H>}, the device's mounts, device
 * nodes and annotations. The one place this is built: the Instance resource's Allocate answers with
 * it, and the CDI spec of the Instance carries the same edits. Pure, thread-safe.
 */
public final class InstanceContract {

  private InstanceContract() {}

  /** The contract of {@code device}'s Instance, as an Allocate container response. */
  public static ContainerAllocateResponse.Builder of(LocalDevice device) {
    ContainerAllocateResponse.Builder response =
        ContainerAllocateResponse.newBuilder()
            .putAllEnvs(
                EnvContract.forInstance(
                    hash(device.instanceName()),
                    EnvContract.mergedProperties(
                        device.device().properties(), device.configuration().brokerProperties())));
    Mounts.addDevice(response, device);
    return response;
  }

  /** The hash part of an Instance name (after the last {@code -}), as {@code Instance.hash()}. */
  static String hash(String instanceName) {
    return instanceName.substring(instanceName.lastIndexOf('-') + 1);
  }
}
