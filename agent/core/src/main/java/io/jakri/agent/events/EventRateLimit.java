package io.jakri.agent.events;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.Objects;

/**
 * At most {@code max} grants in any trailing {@code window}: keeps a burst of occurrences from
 * turning into a burst of API writes. Thread-safe.
 */
public final class EventRateLimit {

  private final Clock clock;
  private final int max;
  private final Duration window;
  private final ArrayDeque<Instant> granted = new ArrayDeque<>();
  private long refusedSinceGrant;

  /** What one {@link #acquire()} got. */
  public enum Grant {
    GRANTED,
    /** The first refusal since the last grant: the one worth telling about. */
    FIRST_REFUSAL,
    REFUSED
  }

  public EventRateLimit(Clock clock, int max, Duration window) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.window = Objects.requireNonNull(window, "window");
    if (max < 1 || window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("max must be at least 1 and window positive");
    }
    this.max = max;
  }

  /** Takes one grant if fewer than {@code max} were taken within the last {@code window}. */
  public boolean tryAcquire() {
    return acquire() == Grant.GRANTED;
  }

  /**
   * Takes one grant if fewer than {@code max} were taken within the last {@code window}; else says
   * whether this is the first refusal since the last grant (decided atomically, so of concurrent
   * refusals exactly one is the first).
   */
  public synchronized Grant acquire() {
    Instant now = clock.instant();
    while (!granted.isEmpty() && !granted.peekFirst().plus(window).isAfter(now)) {
      granted.pollFirst();
    }
    if (granted.size() >= max) {
      return ++refusedSinceGrant == 1 ? Grant.FIRST_REFUSAL : Grant.REFUSED;
    }
    granted.addLast(now);
    refusedSinceGrant = 0;
    return Grant.GRANTED;
  }
}
