package io.jakri.agent.allocation;

import io.jakri.agent.model.EnvContract;
import io.jakri.agent.model.LocalDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a container gets for a slot of an Instance resource {@code akri.sh/<instance>} (DESIGN §5):
 * the device's own env, every merged property {@code K=V} as {@code K} and {@code K_<H>}, the
 * device's mounts, device nodes and annotations. The one place this is built: the Instance
 * resource's Allocate answers with it, and the CDI spec of the Instance carries the same edits.
 * Pure, thread-safe.
 */
public final class InstanceContract {

  private InstanceContract() {}

  /** The contract of {@code device}'s Instance, as an Allocate container response. */
  public static ContainerAllocateResponse.Builder of(LocalDevice device) {
    // The device's own env first, so that the contract's names win on a clash.
    Map<String, String> env = new LinkedHashMap<>(EnvContract.deviceEnv(device.device().env()));
    env.putAll(
        EnvContract.forInstance(
            hash(device.instanceName()),
            EnvContract.mergedProperties(
                device.device().properties(), device.configuration().brokerProperties())));
    ContainerAllocateResponse.Builder response =
        ContainerAllocateResponse.newBuilder().putAllEnvs(env);
    Mounts.addDevice(response, device);
    return response;
  }

  /** The hash part of an Instance name (after the last {@code -}), as {@code Instance.hash()}. */
  static String hash(String instanceName) {
    return instanceName.substring(instanceName.lastIndexOf('-') + 1);
  }
}
