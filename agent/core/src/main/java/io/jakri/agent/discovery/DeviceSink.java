package io.jakri.agent.discovery;

import io.jakri.agent.instance.StoreException;

/**
 * Where every {@link DeviceChange} goes, one at a time and in order, on the discovery thread. The
 * composition root routes it: the Instance store first, then the node's resources, then events.
 */
@FunctionalInterface
public interface DeviceSink {

  /**
   * Applies one change.
   *
   * @param reportedNanos the {@code nanoTime} reading taken when the handler reported the snapshot
   *     behind the change (the oldest one if several were coalesced)
   * @throws StoreException when the Instance store write failed: for a change that keeps the device
   *     ({@link DeviceChange.Appeared}, {@link DeviceChange.Returned}, {@link
   *     DeviceChange.Updated}, {@link DeviceChange.Rewritten}) nothing else was done, and the
   *     device is dropped and written again later; for one that removes it the rest was done
   */
  void accept(DeviceChange change, long reportedNanos) throws StoreException;
}
