package io.jakri.logging;

import java.time.Duration;

/** Durations the way the flags take them: {@code 500ms}, {@code 60s}, {@code 5m}, {@code 1h}. */
public final class DurationText {
  private DurationText() {}

  /** E.g. {@code 60s} for one minute, {@code 5m}, {@code 1h}, {@code 250ms}. */
  public static String of(Duration d) {
    if (d.toNanos() % 1_000_000_000L != 0) {
      return d.toMillis() + "ms";
    }
    long seconds = d.getSeconds();
    if (seconds != 0 && seconds % 3600 == 0) {
      return seconds / 3600 + "h";
    }
    if (seconds >= 120 && seconds % 60 == 0) {
      return seconds / 60 + "m";
    }
    return seconds + "s";
  }
}
