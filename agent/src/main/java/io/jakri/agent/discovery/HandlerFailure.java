package io.jakri.agent.discovery;

/** How a handler failed. */
public enum HandlerFailure {
  /** {@code validate} or {@code start} threw. */
  START_FAILED,
  /** {@code start} did not return in time. */
  START_TIMEOUT,
  /** The handler refused the Configuration's discoveryDetails. */
  INVALID_DETAILS,
  /** A running discovery reported failure. */
  REPORTED_FAILURE
}
