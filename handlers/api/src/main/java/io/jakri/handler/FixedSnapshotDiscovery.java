package io.jakri.handler;

import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A discovery whose devices never change while it runs: it computes and reports one snapshot on the
 * scheduler, soon after it is started, and then stays quiet until it is closed.
 *
 * <p>Thread-safe. {@link #close()} is idempotent; once it has returned, no snapshot is reported (a
 * report that is in progress when close is called finishes first).
 */
public final class FixedSnapshotDiscovery implements Discovery {

  private final Object lock = new Object();
  private final Supplier<List<DiscoveredDevice>> snapshot;
  private final DeviceListener listener;
  private boolean closed;
  private ScheduledFuture<?> report;

  private FixedSnapshotDiscovery(
      Supplier<List<DiscoveredDevice>> snapshot, DeviceListener listener) {
    this.snapshot = snapshot;
    this.listener = listener;
  }

  /** Schedules the single report and returns at once. */
  public static FixedSnapshotDiscovery start(
      ScheduledExecutorService scheduler,
      Supplier<List<DiscoveredDevice>> snapshot,
      DeviceListener listener) {
    FixedSnapshotDiscovery discovery = new FixedSnapshotDiscovery(snapshot, listener);
    synchronized (discovery.lock) {
      discovery.report = scheduler.schedule(discovery::reportOnce, 0, TimeUnit.MILLISECONDS);
    }
    return discovery;
  }

  private void reportOnce() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        listener.devices(snapshot.get());
      } catch (RuntimeException e) {
        listener.failed("could not report the devices: " + e.getMessage(), e);
      }
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      report.cancel(false);
    }
  }
}
