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

  Readiness(int expected, ToIntFunction<String> required) {
    this.expected = expected;
    this.required = required;
  }

  @Override
  public void registered(String resource, String endpoint) {
    if (registered.isEmpty()) {
      firstRegisteredAt = System.nanoTime();
    }
    registered.add(resource);
    ready.remove(resource);
  }

  @Override
  public void snapshot(String resource, Map<String, String> devices) {
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

  long firstRegisteredAt() {
    return firstRegisteredAt;
  }
}
