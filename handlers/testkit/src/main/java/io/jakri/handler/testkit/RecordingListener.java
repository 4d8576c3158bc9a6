package io.jakri.handler.testkit;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A {@link DeviceListener} that keeps every snapshot and failure a handler reports, and the thread
 * each snapshot arrived on. Thread-safe; the lists it returns are live views, so a test can await a
 * condition on them.
 */
public final class RecordingListener implements DeviceListener {

  private final List<List<DiscoveredDevice>> snapshots = new CopyOnWriteArrayList<>();
  private final List<Thread> threads = new CopyOnWriteArrayList<>();
  private final List<String> failures = new CopyOnWriteArrayList<>();

  @Override
  public void devices(List<DiscoveredDevice> devices) {
    threads.add(Thread.currentThread());
    snapshots.add(List.copyOf(devices));
  }

  @Override
  public void failed(String reason, Throwable cause) {
    failures.add(reason);
  }

  /** Every snapshot so far, oldest first (a live, unmodifiable view). */
  public List<List<DiscoveredDevice>> snapshots() {
    return java.util.Collections.unmodifiableList(snapshots);
  }

  /** The thread each snapshot arrived on, in the order of {@link #snapshots()}. */
  public List<Thread> threads() {
    return java.util.Collections.unmodifiableList(threads);
  }

  /** Every failure reason so far, oldest first. */
  public List<String> failures() {
    return java.util.Collections.unmodifiableList(failures);
  }

  /** The latest snapshot, if any. */
  public Optional<List<DiscoveredDevice>> last() {
    return snapshots.isEmpty()
        ? Optional.empty()
        : Optional.of(snapshots.get(snapshots.size() - 1));
  }

  /** The device ids of the latest snapshot, or none. */
  public List<String> lastIds() {
    return last().orElse(List.of()).stream().map(DiscoveredDevice::id).toList();
  }
}
