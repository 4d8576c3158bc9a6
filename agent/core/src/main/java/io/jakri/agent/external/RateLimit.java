package io.jakri.agent.external;

import java.util.function.LongSupplier;

/** A token bucket: {@code perSecond} per second, bursts of twice that. */
final class RateLimit {
  private final double perNano;
  private final double burst;
  private final LongSupplier nanoTime;
  private double tokens;
  private long last;
  private long refused;

  RateLimit(int perSecond, LongSupplier nanoTime) {
    this.perNano = perSecond / 1e9;
    this.burst = 2.0 * perSecond;
    this.nanoTime = nanoTime;
    this.tokens = burst;
    this.last = nanoTime.getAsLong();
  }

  synchronized boolean tryAcquire() {
    long now = nanoTime.getAsLong();
    tokens = Math.min(burst, tokens + (now - last) * perNano);
    last = now;
    if (tokens >= 1) {
      tokens -= 1;
      return true;
    }
    refused++;
    return false;
  }

  /** How many were refused so far. */
  synchronized long refusedNow() {
    return refused;
  }
}
