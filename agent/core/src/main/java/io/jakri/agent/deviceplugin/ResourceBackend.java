package io.jakri.agent.deviceplugin;

import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.util.List;

/**
 * What one advertised resource knows: its devices, how to prefer and allocate them. Implemented for
 * Instance resources and class resources; called from gRPC threads, so thread-safe.
 */
public interface ResourceBackend {

  /** The extended resource name, e.g. {@code akri.sh/zeroconf-218f68}. */
  String resourceName();

  /** The socket file name stem (without {@code -<ts>.sock}), unique among resources. */
  String socketStem();

  /** The current devices and their health, in a stable order. */
  List<Device> devices();

  /**
   * Chooses {@code size} devices out of {@code available}, containing {@code mustInclude}. Only
   * advice: the kubelet intersects it with {@code available}.
   */
  List<String> preferredAllocation(List<String> available, List<String> mustInclude, int size);

  /**
   * Claims the devices for one container and says what the container gets. Must have claimed them
   * (durably, in the Instance store) before it returns.
   *
   * @throws AllocationException when a device is unknown, unhealthy or held elsewhere
   */
  ContainerAllocateResponse allocate(List<String> deviceIds) throws AllocationException;
}
