package io.jakri.agent.reclaim;

import java.util.Objects;

/**
 * One device that a container on this node holds, as the kubelet's PodResources API reports it.
 *
 * @param resourceName the extended resource, e.g. {@code akri.sh/<instance>} or {@code
 *     example.com/widget}
 * @param deviceId the device plugin's device id; for jakri resources a slot id {@code
 *     <instance>-<n>}
 */
public record DeviceInUse(String resourceName, String deviceId) {
  public DeviceInUse {
    Objects.requireNonNull(resourceName, "resourceName");
    Objects.requireNonNull(deviceId, "deviceId");
  }
}
