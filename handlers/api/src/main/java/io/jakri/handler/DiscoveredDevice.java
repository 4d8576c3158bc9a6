package io.jakri.handler;

import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * One device as a handler sees it.
 *
 * @param id stable device id, unique within the Configuration on this node; it is hashed into the
 *     Instance name
 * @param properties name/value pairs given to containers as env vars (see DESIGN §5)
 * @param mounts host paths to mount into containers that get the device (the agent refuses mounts
 *     of system or kubelet directories and paths that are not absolute and normalised; see the
 *     agent's SECURITY.md)
 * @param deviceSpecs device nodes to give containers that get the device
 * @param annotations container annotations to set when the device is allocated
 * @param deviceClass the class resource the device belongs to (e.g. {@code example.com/widget});
 *     empty for the Configuration's default class {@code akri.sh/<configuration>}
 * @param shared whether other nodes can see the same device (then the node name does not enter the
 *     Instance name and one Instance spans all those nodes)
 * @param env env vars given under exactly these names to every container that gets the device, on
 *     the Instance resource and on the class resource alike (unlike properties, which the agent
 *     names per resource, DESIGN §5); for programs that expect fixed names, such as the simple
 *     device plugin's {@code <ENV_PREFIX>_<device id>}. The agent drops names Kubernetes would not
 *     accept ({@link Names#isContainerEnvName}), reserved names and over-long entries
 */
public record DiscoveredDevice(
    String id,
    Map<String, String> properties,
    List<Mount> mounts,
    List<DeviceSpec> deviceSpecs,
    Map<String, String> annotations,
    Optional<String> deviceClass,
    boolean shared,
    Map<String, String> env) {

  public DiscoveredDevice {
    Objects.requireNonNull(id, "id");
    properties = Map.copyOf(properties == null ? Map.of() : properties);
    mounts = List.copyOf(mounts == null ? List.of() : mounts);
    deviceSpecs = List.copyOf(deviceSpecs == null ? List.of() : deviceSpecs);
    annotations = Map.copyOf(annotations == null ? Map.of() : annotations);
    deviceClass = deviceClass == null ? Optional.empty() : deviceClass;
    env = Map.copyOf(env == null ? Map.of() : env);
  }

  /** A device without env of its own (every container env var comes from its properties). */
  public DiscoveredDevice(
      String id,
      Map<String, String> properties,
      List<Mount> mounts,
      List<DeviceSpec> deviceSpecs,
      Map<String, String> annotations,
      Optional<String> deviceClass,
      boolean shared) {
    this(id, properties, mounts, deviceSpecs, annotations, deviceClass, shared, Map.of());
  }

  /** A device with only an id, properties and the sharing flag. */
  public static DiscoveredDevice of(String id, Map<String, String> properties, boolean shared) {
    return new DiscoveredDevice(
        id, properties, List.of(), List.of(), Map.of(), Optional.empty(), shared);
  }

  /** A host path mounted into the container. */
  public record Mount(String containerPath, String hostPath, boolean readOnly) {
    public Mount {
      Objects.requireNonNull(containerPath, "containerPath");
      Objects.requireNonNull(hostPath, "hostPath");
    }
  }

  /**
   * A device node given to the container: its host path under {@code /dev/}, and cgroup permissions
   * as in the kubelet API, one of {@code r}, {@code w}, {@code m}, {@code rw}, {@code rm}, {@code
   * wm}, {@code rwm}. Permissions are kept as given ({@code null} as empty); the agent refuses a
   * device node with empty or other permissions rather than guess what they grant.
   */
  public record DeviceSpec(String containerPath, String hostPath, String permissions) {
    public DeviceSpec {
      Objects.requireNonNull(containerPath, "containerPath");
      Objects.requireNonNull(hostPath, "hostPath");
      permissions = permissions == null ? "" : permissions;
    }
  }
}
