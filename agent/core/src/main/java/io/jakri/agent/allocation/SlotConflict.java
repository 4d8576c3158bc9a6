package io.jakri.agent.allocation;

/**
 * Contention met while {@link SlotClaims} claimed slots for an Allocate, reported to the sink
 * passed to it (metrics, Events). Reported on the gRPC thread serving the Allocate, after the claim
 * ended.
 */
public sealed interface SlotConflict {

  /** The Instance the claim was on. */
  String instanceName();

  /**
   * The claim's write of the Instance lost {@code conflicts} times to another writer (HTTP 409 in
   * cluster mode, or the Instance vanished between read and write) and was retried on fresh state.
   */
  record LostWrites(String instanceName, int conflicts) implements SlotConflict {}

  /**
   * The claim was refused because a requested slot is held by someone else (another node, or this
   * node through the other kind of resource).
   */
  record HeldElsewhere(String instanceName) implements SlotConflict {}
}
