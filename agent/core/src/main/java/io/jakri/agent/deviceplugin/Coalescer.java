package io.jakri.agent.deviceplugin;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * Runs an action for an item once per burst of requests: the first request schedules it {@code
 * window} later on the scheduler, and requests until it runs join that run. Each item has its own
 * pending flag. Thread-safe.
 *
 * @param <T> the items (for {@link DevicePluginManager}: served resources, whose devices are
 *     published to the kubelet)
 */
final class Coalescer<T> {
  private final ScheduledExecutorService scheduler;
  private final long windowNanos;
  private final Function<T, AtomicBoolean> pending;
  private final Consumer<T> action;

  /**
   * @param pending the item's flag, true while a run is scheduled
   * @param action run on the scheduler's thread
   */
  Coalescer(
      ScheduledExecutorService scheduler,
      Duration window,
      Function<T, AtomicBoolean> pending,
      Consumer<T> action) {
    this.scheduler = scheduler;
    this.windowNanos = window.toNanos();
    this.pending = pending;
    this.action = action;
  }

  /** Runs the action for {@code item} after the window, unless a run is already scheduled. */
  void request(T item) {
    AtomicBoolean flag = pending.apply(item);
    if (flag.compareAndSet(false, true)) {
      scheduler.schedule(
          () -> {
            flag.set(false);
            action.accept(item);
          },
          windowNanos,
          TimeUnit.NANOSECONDS);
    }
  }
}
