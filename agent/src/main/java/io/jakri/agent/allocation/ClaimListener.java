package io.jakri.agent.allocation;

/**
 * Told about contention while {@link NodeResources} claims slots for Allocate (metrics, Events).
 * Called on the gRPC thread serving the Allocate, after the claim ended; implementations must not
 * block and must not throw.
 */
public interface ClaimListener {

  /**
   * The claim's write of the Instance lost {@code conflicts} times to another writer (HTTP 409 in
   * cluster mode, or the Instance vanished between read and write) and was retried on fresh state.
   */
  default void writeConflicts(String instanceName, int conflicts) {}

  /**
   * The claim was refused because a requested slot is held by someone else (another node, or this
   * node through the other kind of resource).
   */
  default void heldElsewhere(String instanceName) {}
}
