package io.jakri.agent.deviceplugin;

/** An Allocate request cannot be granted; the message is returned to the kubelet. */
public final class AllocationException extends Exception {
  private static final long serialVersionUID = 1L;

  /** Why, as a short label usable in metrics. */
  public enum Reason {
    UNKNOWN_DEVICE,
    UNHEALTHY,
    HELD_ELSEWHERE,
    BEING_FREED,
    STORE_UNAVAILABLE,
    INVALID_REQUEST
  }

  private final Reason reason;

  public AllocationException(Reason reason, String message) {
    super(message);
    this.reason = reason;
  }

  public Reason reason() {
    return reason;
  }
}
