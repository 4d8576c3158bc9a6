package io.jakri.bench;

import io.jakri.kubelet.emulator.EmulatorListener;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.ToIntFunction;

/**
 * Watches the kubelet emulator until a given number of resources are advertised: registered after
 * this tracker was added, then a ListAndWatch snapshot with at least {@code required(resource)}
 * healthy devices. Counting happens in the listener (O(1) per event), so waiting for 10,000
 * resources costs nothing while they arrive. Callbacks arrive one at a time (the emulator's
 * contract), so the sets need no lock.
 */
final class Readiness implements EmulatorListener {

  private final int expected;
  private final ToIntFunction<String> required;
  private final Set<String> registered = new HashSet<>();
  private final Set<String> ready = new HashSet<>();
  private final CountDownLatch done = new CountDownLatch(1);
  private volatile long doneAt;
  private volatile long firstRegisteredAt;
  private volatile long startedAt;
  private volatile long snapshots;
  private volatile long registrations;
  private volatile long rejections;
  private volatile long streamEnds;
  private volatile long deviceEntries;

  Readiness(int expected, ToIntFunction<String> required) {
    this.expected = expected;
    this.required = required;
  }

  @Override
  public void registered(String resource, String endpoint) {
    if (registered.isEmpty()) {
      firstRegisteredAt = System.nanoTime();
    }
    registrations++;
    registered.add(resource);
    ready.remove(resource);
  }

  @Override
  public void registrationRejected(String resource, String reason) {
    rejections++;
  }

  @Override
  public void streamEnded(String resource) {
    streamEnds++;
  }

  @Override
  public void snapshot(String resource, Map<String, String> devices) {
    snapshots++;
    deviceEntries += devices.size();
    if (!registered.contains(resource) || ready.contains(resource)) {
      return;
    }
    int healthy = 0;
    for (String health : devices.values()) {
      if ("Healthy".equals(health)) {
        healthy++;
      }
    }
    if (healthy >= required.applyAsInt(resource)) {
      ready.add(resource);
      if (ready.size() >= expected && done.getCount() > 0) {
        doneAt = System.nanoTime();
        done.countDown();
      }
    }
  }

  /** Waits until every expected resource is advertised; returns System.nanoTime() then. */
  long await(Duration timeout) throws InterruptedException {
    if (!done.await(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(
          "only "
              + ready.size()
              + " of "
              + expected
              + " resources advertised ("
              + registered.size()
              + " registered) after "
              + timeout);
    }
    return doneAt;
  }

  /** Register calls the kubelet accepted since this tracker was added. */
  long registrations() {
    return registrations;
  }

  /** Register calls the kubelet refused since this tracker was added. */
  long rejections() {
    return rejections;
  }

  /** ListAndWatch streams of current endpoints that ended since this tracker was added. */
  long streamEnds() {
    return streamEnds;
  }

  /** ListAndWatch messages the kubelet received since this tracker was added. */
  long snapshots() {
    return snapshots;
  }

  /** Devices in those messages, summed (what the kubelet decoded and checkpointed). */
  long deviceEntries() {
    return deviceEntries;
  }

  /** Marks when what is awaited began (System.nanoTime()). */
  void started(long nanoTime) {
    startedAt = nanoTime;
  }

  long startedAt() {
    return startedAt;
  }

  /** System.nanoTime() when every expected resource was advertised. */
  long doneAt() {
    return doneAt;
  }

  long firstRegisteredAt() {
    return firstRegisteredAt;
  }
}
