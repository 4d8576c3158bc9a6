package io.jakri.agent.external;

import java.time.Duration;

/**
 * The failures of one endpoint's {@code Discover} stream and what follows the next one: dial again
 * after a backoff (250 ms doubling to 5 s, never past the drop), or, once the stream has kept
 * failing for {@code dropAfter}, drop the endpoint. An answer ends the failing. Not thread-safe.
 */
final class StreamFailures {

  static final long MIN_RETRY_MS = 250;
  static final long MAX_RETRY_MS = 5_000;

  /** What follows a failure. */
  sealed interface Next permits Retry, Drop {}

  /** Dial again in {@code delayMs}. */
  record Retry(long delayMs) implements Next {}

  /** Drop the endpoint; {@code reason} tells for how long and how it failed. */
  record Drop(String reason) implements Next {}

  private final long dropAfterMs;
  private int attempts;
  private long failingSince = -1;
  private String firstFailure;

  StreamFailures(Duration dropAfter) {
    this.dropAfterMs = dropAfter.toMillis();
  }

  /** Whether the stream is failing (no answer since its last failure). */
  boolean failing() {
    return failingSince >= 0;
  }

  /** The stream answered: it is not failing, the backoff starts over. */
  void answered() {
    failingSince = -1;
    firstFailure = null;
    attempts = 0;
  }

  /** The next dial's backoff starts over (the endpoint registered again). */
  void resetBackoff() {
    attempts = 0;
  }

  /** The stream failed at {@code nowNanos} as {@code description}. */
  Next failed(long nowNanos, String description) {
    if (failingSince < 0) {
      failingSince = nowNanos;
      firstFailure = description;
    }
    long failingMs = (nowNanos - failingSince) / 1_000_000;
    if (failingMs >= dropAfterMs) {
      return new Drop(
          "Discover kept failing for "
              + failingMs
              + " ms ("
              + (firstFailure.equals(description) ? "" : "first: " + firstFailure + "; ")
              + "last: "
              + description
              + ")");
    }
    long delay =
        Math.min(
            Math.min(MAX_RETRY_MS, MIN_RETRY_MS << Math.min(attempts, 5)),
            Math.max(1, dropAfterMs - failingMs));
    attempts++;
    return new Retry(delay);
  }
}
