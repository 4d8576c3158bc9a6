package io.jakri.kubelet.emulator;

import io.jakri.kubelet.v1beta1.CDIDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.DeviceSpec;
import io.jakri.kubelet.v1beta1.Mount;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * What one container received from the device plugins: the device ids per resource and the merged
 * {@code ContainerAllocateResponse}s of all its resources.
 *
 * <p>Merging follows the kubelet's {@code deviceRunContainerOptions}: for envs and annotations the
 * first resource that sets a key wins; mounts and device nodes are de-duplicated by container path,
 * CDI devices by name (first wins). Resources are merged in the container's request order.
 *
 * @param deviceIds resource name to allocated device ids, in request order
 * @param envs environment variables
 * @param mounts mounts
 * @param devices device nodes
 * @param annotations container annotations (for the runtime / CDI)
 * @param cdiDevices fully qualified CDI device names
 */
public record ContainerAllocation(
    Map<String, List<String>> deviceIds,
    Map<String, String> envs,
    List<MountInfo> mounts,
    List<DeviceSpecInfo> devices,
    Map<String, String> annotations,
    List<String> cdiDevices) {

  /** A container that received no devices. */
  public static final ContainerAllocation EMPTY =
      new ContainerAllocation(Map.of(), Map.of(), List.of(), List.of(), Map.of(), List.of());

  public ContainerAllocation {
    Map<String, List<String>> ids = new LinkedHashMap<>();
    deviceIds.forEach((resource, list) -> ids.put(resource, List.copyOf(list)));
    deviceIds = Collections.unmodifiableMap(ids);
    envs = Collections.unmodifiableMap(new LinkedHashMap<>(envs));
    mounts = List.copyOf(mounts);
    devices = List.copyOf(devices);
    annotations = Collections.unmodifiableMap(new LinkedHashMap<>(annotations));
    cdiDevices = List.copyOf(cdiDevices);
  }

  /** All device ids of one resource; empty if the container got none. */
  public List<String> deviceIds(String resource) {
    return deviceIds.getOrDefault(resource, List.of());
  }

  /**
   * Merges the Allocate answers of a container's resources.
   *
   * @param deviceIds resource to device ids
   * @param responses resource to its {@code container_responses[0]}, same key order
   */
  static ContainerAllocation merge(
      Map<String, List<String>> deviceIds, Map<String, ContainerAllocateResponse> responses) {
    Map<String, String> envs = new LinkedHashMap<>();
    Map<String, MountInfo> mounts = new LinkedHashMap<>();
    Map<String, DeviceSpecInfo> devices = new LinkedHashMap<>();
    Map<String, String> annotations = new LinkedHashMap<>();
    Set<String> cdi = new LinkedHashSet<>();
    for (ContainerAllocateResponse r : responses.values()) {
      r.getEnvsMap().forEach(envs::putIfAbsent);
      for (Mount m : r.getMountsList()) {
        mounts.putIfAbsent(
            m.getContainerPath(),
            new MountInfo(m.getContainerPath(), m.getHostPath(), m.getReadOnly()));
      }
      for (DeviceSpec d : r.getDevicesList()) {
        devices.putIfAbsent(
            d.getContainerPath(),
            new DeviceSpecInfo(d.getContainerPath(), d.getHostPath(), d.getPermissions()));
      }
      r.getAnnotationsMap().forEach(annotations::putIfAbsent);
      for (CDIDevice c : r.getCdiDevicesList()) {
        cdi.add(c.getName());
      }
    }
    return new ContainerAllocation(
        deviceIds,
        envs,
        new ArrayList<>(mounts.values()),
        new ArrayList<>(devices.values()),
        annotations,
        new ArrayList<>(cdi));
  }
}
