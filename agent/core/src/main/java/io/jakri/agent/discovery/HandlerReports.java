package io.jakri.agent.discovery;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BooleanSupplier;
import java.util.function.LongSupplier;

/**
 * What one Configuration's handler reports, queued to the discovery thread. Handlers may report
 * snapshots faster than the discovery thread processes them, so only the newest snapshot waiting
 * matters: it keeps the report time of the oldest report it replaced (the changes waiting since
 * then are in it) and the run it came from (the taker drops a snapshot of a stopped run).
 * Lock-free: the listeners may be called from any thread, {@link #take} is called on the discovery
 * thread.
 */
final class HandlerReports {

  /**
   * A snapshot waiting.
   *
   * @param runId the run of the handler's discovery that reported it
   * @param reportedNanos when the oldest report it stands for was made
   */
  record Pending(long runId, List<DiscoveredDevice> devices, long reportedNanos) {}

  /** Told on the discovery thread that run {@code runId} reported failure. */
  interface Failures {
    void failed(long runId, String reason, Throwable cause);
  }

  private final AtomicReference<Pending> pending = new AtomicReference<>();
  private final Executor loop;
  private final LongSupplier nanoTime;
  private final BooleanSupplier closed;
  private final Runnable process;
  private final Failures failures;

  /**
   * @param loop the discovery thread
   * @param nanoTime the clock of report times
   * @param closed whether the discovery is closing (then snapshots are dropped)
   * @param process run on the discovery thread when a snapshot waits (it calls {@link #take})
   * @param failures told on the discovery thread when a run reports failure
   */
  HandlerReports(
      Executor loop,
      LongSupplier nanoTime,
      BooleanSupplier closed,
      Runnable process,
      Failures failures) {
    this.loop = loop;
    this.nanoTime = nanoTime;
    this.closed = closed;
    this.process = process;
    this.failures = failures;
  }

  /** The listener handed to run {@code runId} of the handler's discovery. */
  DeviceListener listener(long runId) {
    return new DeviceListener() {
      @Override
      public void devices(List<DiscoveredDevice> devices) {
        if (closed.getAsBoolean() || devices == null) {
          return;
        }
        List<DiscoveredDevice> copy = new ArrayList<>(devices);
        long now = nanoTime.getAsLong();
        Pending previous =
            pending.getAndUpdate(
                p ->
                    new Pending(
                        runId, copy, p != null && p.runId() == runId ? p.reportedNanos() : now));
        if (previous == null) {
          loop.execute(process);
        }
      }

      @Override
      public void failed(String reason, Throwable cause) {
        loop.execute(() -> failures.failed(runId, reason, cause));
      }
    };
  }

  /**
   * Sets {@code devices} (the last snapshot processed) of run {@code runId} to be processed again,
   * unless a snapshot is waiting already.
   */
  void again(long runId, List<DiscoveredDevice> devices) {
    if (pending.compareAndSet(null, new Pending(runId, devices, nanoTime.getAsLong()))) {
      loop.execute(process);
    }
  }

  /** Takes what waits, if anything. */
  Optional<Pending> take() {
    return Optional.ofNullable(pending.getAndSet(null));
  }
}
