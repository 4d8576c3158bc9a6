package io.jakri.agent.deviceplugin;

import java.time.Duration;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;

/**
 * Runs an action for an item at most once per {@code window}: a request when the item's last run is
 * at least a window ago runs it at once (on the scheduler, without waiting); a request sooner is
 * scheduled for a window after that last run, and requests until it runs join that run. A lone
 * change is published at once; a burst is published at its start and then once per window. Each
 * item has its own {@link Slot}. Thread-safe.
 *
 * @param <T> the items (for {@link DevicePluginManager}: served resources, whose devices are
 *     published to the kubelet)
 */
final class Coalescer<T> {
  private final ScheduledExecutorService scheduler;
  private final long windowNanos;
  private final Function<T, Slot> slot;
  private final Consumer<T> action;
  private final LongSupplier nanoTime;

  /** One item's state: whether a run is scheduled, and when its last run started. */
  static final class Slot {
    private final AtomicBoolean pending = new AtomicBoolean();
    private volatile long lastRun;
    private volatile boolean ran;

    /** Whether a run is scheduled and has not started. */
    boolean pending() {
      return pending.get();
    }
  }

  /**
   * @param slot the item's state
   * @param action run on the scheduler's thread
   */
  Coalescer(
      ScheduledExecutorService scheduler,
      Duration window,
      Function<T, Slot> slot,
      Consumer<T> action) {
    this(scheduler, window, slot, action, System::nanoTime);
  }

  Coalescer(
      ScheduledExecutorService scheduler,
      Duration window,
      Function<T, Slot> slot,
      Consumer<T> action,
      LongSupplier nanoTime) {
    this.scheduler = scheduler;
    this.windowNanos = window.toNanos();
    this.slot = slot;
    this.action = action;
    this.nanoTime = nanoTime;
  }

  /**
   * Runs the action for {@code item} now if its last run is a window ago or more, else a window
   * after that run; nothing more if a run is already scheduled.
   */
  void request(T item) {
    Slot s = slot.apply(item);
    if (s.pending.compareAndSet(false, true)) {
      long delay = 0;
      if (s.ran) {
        delay = Math.max(0, s.lastRun + windowNanos - nanoTime.getAsLong());
      }
      scheduler.schedule(
          () -> {
            s.lastRun = nanoTime.getAsLong();
            s.ran = true;
            s.pending.set(false);
            action.accept(item);
          },
          delay,
          TimeUnit.NANOSECONDS);
    }
  }
}
