package io.jakri.agent.metrics;

import io.micrometer.core.instrument.Timer;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;

/**
 * Measures discovery-to-advertised latency per resource: from a handler reporting a change of what
 * the kubelet sees (a device appearing, vanishing or coming back) to the next ListAndWatch snapshot
 * of the resource being sent to the kubelet. While a change waits, later ones of the same resource
 * keep the oldest report time; a snapshot sent records one sample and starts over. When the
 * kubelet's streams turn out to have the devices already (nothing to send), or the resource is
 * retired, the waiting change is dropped without a sample. Under changes racing a publish a sample
 * can be lost or a little short; it is never inflated by a change that was already advertised.
 *
 * <p>Memory: at most {@code maxPending} resources wait at once (more are not measured).
 * Thread-safe: changes come from the discovery thread, snapshots from gRPC and timer threads.
 */
final class AdvertiseLatency {

  private final Timer timer;
  private final LongSupplier nanoTime;
  private final int maxPending;
  private final Map<String, Long> pending = new ConcurrentHashMap<>();

  /**
   * @param nanoTime the same clock the report times were read from ({@code System::nanoTime})
   */
  AdvertiseLatency(Timer timer, LongSupplier nanoTime, int maxPending) {
    this.timer = timer;
    this.nanoTime = nanoTime;
    this.maxPending = maxPending;
  }

  /** A change of {@code resource}'s devices was reported at {@code reportedNanos}. */
  void changed(String resource, long reportedNanos) {
    if (pending.size() < maxPending || pending.containsKey(resource)) {
      pending.merge(resource, reportedNanos, Math::min);
    }
  }

  /** The kubelet's streams of {@code resource} are up to date; {@code sent} if a snapshot went. */
  void advertised(String resource, boolean sent) {
    Long since = pending.remove(resource);
    if (since != null && sent) {
      timer.record(Math.max(0, nanoTime.getAsLong() - since), TimeUnit.NANOSECONDS);
    }
  }

  /** The resource is no longer served: a waiting change will never be advertised. */
  void retired(String resource) {
    pending.remove(resource);
  }

  /** Resources with a change waiting (for tests). */
  int waiting() {
    return pending.size();
  }
}
