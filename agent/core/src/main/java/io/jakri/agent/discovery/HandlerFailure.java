package io.jakri.agent.discovery;

/** How a discovery handler failed (its discovery is restarted with backoff, or waits). */
public enum HandlerFailure {
  /** {@code validate} or {@code start} threw. */
  START_FAILED,
  /** {@code start} did not return in time. */
  START_TIMEOUT,
  /** The handler refused the Configuration's discoveryDetails. */
  INVALID_DETAILS,
  /** A running discovery reported failure. */
  REPORTED_FAILURE,
  /**
   * Not started: the handler has as many stranded threads (calls that never returned) as {@link
   * HandlerLimits} allows.
   */
  STRANDED_LIMIT
}
