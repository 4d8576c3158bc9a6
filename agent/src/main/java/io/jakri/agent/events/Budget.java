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
public final class Budget {

  private final Clock clock;
  private final int max;
  private final Duration window;
  private final ArrayDeque<Instant> granted = new ArrayDeque<>();
  private long refusedSinceGrant;

  public Budget(Clock clock, int max, Duration window) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.window = Objects.requireNonNull(window, "window");
    if (max < 1 || window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("max must be at least 1 and window positive");
    }
    this.max = max;
  }

  /** Takes one grant if fewer than {@code max} were taken within the last {@code window}. */
  public synchronized boolean tryAcquire() {
    Instant now = clock.instant();
    while (!granted.isEmpty() && !granted.peekFirst().plus(window).isAfter(now)) {
      granted.pollFirst();
    }
    if (granted.size() >= max) {
      refusedSinceGrant++;
      return false;
    }
    granted.addLast(now);
    refusedSinceGrant = 0;
    return true;
  }

  /**
   * Refusals since the last grant: 1 right after the first refusal of a streak (the one worth
   * telling about), 0 after a grant.
   */
  public synchronized long refusedSinceGrant() {
    return refusedSinceGrant;
  }
}
