package io.jakri.controller.queue;

import java.time.Duration;
import java.util.random.RandomGenerator;

/**
 * Exponential retry delay per key: {@code base * 2^(failures-1)}, capped at {@code max}, then
 * scaled by a random factor in [0.8, 1.2) so keys that failed together do not retry in lockstep.
 */
public record Backoff(Duration base, Duration max) {

  public Backoff {
    if (base.isNegative() || base.isZero() || max.compareTo(base) < 0) {
      throw new IllegalArgumentException("need 0 < base <= max, got " + base + ", " + max);
    }
  }

  /** The delay before retry number {@code failures} (1 for the first retry). */
  public Duration delay(int failures, RandomGenerator random) {
    int shift = Math.min(Math.max(failures - 1, 0), 30);
    long millis = Math.min(max.toMillis(), base.toMillis() << shift);
    double jitter = 0.8 + 0.4 * random.nextDouble();
    return Duration.ofMillis(Math.max(1, (long) (millis * jitter)));
  }
}
