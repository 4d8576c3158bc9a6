package io.jakri.agent.events;

import java.util.HashMap;
import java.util.Map;

/**
 * Tells when a resource's Register calls with the kubelet have failed long enough to tell an
 * operator: once per failure streak, at its {@code threshold}-th consecutive failure (the device
 * plugin manager retries with backoff from 50 ms to 5 s, so the default of 5 is about 1.5 s of
 * failing, past a kubelet restart's transient refusals). A success or the resource's retirement
 * ends the streak. Memory is one counter per failing resource. Thread-safe.
 */
public final class RegistrationFailures {

  /** Default number of consecutive failures before an Event. */
  public static final int DEFAULT_THRESHOLD = 5;

  private final int threshold;
  private final Map<String, Integer> streaks = new HashMap<>();

  public RegistrationFailures(int threshold) {
    if (threshold < 1) {
      throw new IllegalArgumentException("threshold must be at least 1");
    }
    this.threshold = threshold;
  }

  public int threshold() {
    return threshold;
  }

  /** Counts one failure; true exactly when the streak reaches the threshold. */
  public synchronized boolean failed(String resource) {
    int streak = streaks.merge(resource, 1, (a, b) -> a > threshold ? a : a + b);
    return streak == threshold;
  }

  /** The resource registered: its streak ends. */
  public synchronized void succeeded(String resource) {
    streaks.remove(resource);
  }

  /** The resource is no longer served. */
  public synchronized void forget(String resource) {
    streaks.remove(resource);
  }
}
