package io.jakri.agent.events;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Tells when slot conflicts on one Instance form a storm: at least {@code threshold} conflicts
 * within a sliding {@code window}. A storm is reported once; the Instance then stays quiet for one
 * {@code window} (conflicts during it start the next count), so a lasting storm is reported at most
 * once per window. Memory is bounded: at most {@code maxTracked} Instances are remembered (least
 * recently conflicting forgotten first), each with at most {@code threshold} timestamps.
 * Thread-safe.
 */
public final class ConflictStorms {

  /** Default number of conflicts that make a storm ... */
  public static final int DEFAULT_THRESHOLD = 10;

  /** ... when they happen within this window. */
  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(1);

  private final Clock clock;
  private final int threshold;
  private final Duration window;
  private final Map<String, Track> tracks;

  public ConflictStorms(Clock clock, int threshold, Duration window, int maxTracked) {
    this.clock = Objects.requireNonNull(clock, "clock");
    this.window = Objects.requireNonNull(window, "window");
    if (threshold < 1 || maxTracked < 1 || window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException("threshold and maxTracked must be positive, window too");
    }
    this.threshold = threshold;
    this.tracks =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<String, Track> eldest) {
            return size() > maxTracked;
          }
        };
  }

  public int threshold() {
    return threshold;
  }

  public Duration window() {
    return window;
  }

  /**
   * Records {@code count} conflicts on {@code instance} happening now; true when they complete a
   * storm that has not been reported yet (the caller reports it).
   */
  public synchronized boolean record(String instance, int count) {
    if (count < 1) {
      return false;
    }
    Instant now = clock.instant();
    Track track = tracks.computeIfAbsent(instance, k -> new Track());
    if (track.reported != null && now.isBefore(track.reported.plus(window))) {
      return false; // quiet period after a report
    }
    for (int i = 0; i < Math.min(count, threshold); i++) {
      track.times.addLast(now);
    }
    while (track.times.size() > threshold) {
      track.times.pollFirst();
    }
    Instant since = now.minus(window);
    while (!track.times.isEmpty() && !track.times.peekFirst().isAfter(since)) {
      track.times.pollFirst();
    }
    if (track.times.size() >= threshold) {
      track.times.clear();
      track.reported = now;
      return true;
    }
    return false;
  }

  /** Forgets an Instance (deleted, or no longer served here). */
  public synchronized void forget(String instance) {
    tracks.remove(instance);
  }

  /** Conflict times within the window (at most {@code threshold}) and when last reported. */
  private static final class Track {
    final ArrayDeque<Instant> times = new ArrayDeque<>();
    Instant reported;
  }
}
