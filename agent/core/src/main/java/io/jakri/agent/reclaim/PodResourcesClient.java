package io.jakri.agent.reclaim;

import java.util.Set;

/**
 * The seam to the kubelet's PodResources API: which devices the containers on this node hold now.
 * Implementations are thread-safe.
 */
public interface PodResourcesClient extends AutoCloseable {

  /**
   * Every (resource, device id) pair held by any container of any pod the kubelet reports. An empty
   * set means the kubelet answered and no container holds a device.
   *
   * @throws PodResourcesException when the kubelet could not be asked or answered with an error;
   *     the answer is then unknown, not empty
   */
  Set<DeviceInUse> devicesInUse() throws PodResourcesException;

  /** Releases the connection. Idempotent; later calls to {@link #devicesInUse()} fail. */
  @Override
  void close();
}
