package io.jakri.agent.deviceplugin;

import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Holds {@link DevicePluginManager}'s server starts while the process is within its reserve of open
 * files ({@link FileHeadroom}): an episode begins when a start is refused (one WARN, an {@link
 * DevicePluginEvent.OpenFilesLow} event with the resources waiting) and ends once nothing waits any
 * more (one INFO, the event with 0). While held, the manager's {@code pump} is run again on the
 * control executor after {@link FileHeadroom#RECOUNT}. Confined to the manager's control thread.
 */
final class ServerStartPause {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);

  private final FileHeadroom headroom;
  private final ScheduledExecutorService scheduler;
  private final Executor control;
  private final Runnable pump;
  private final Consumer<DevicePluginEvent> events;
  private boolean held;
  private boolean recheckPending;

  /**
   * @param pump starts what waits, as far as files allow (it calls {@link #mayStart} and {@link
   *     #drained}); run on {@code control}
   * @param events must not throw
   */
  ServerStartPause(
      FileHeadroom headroom,
      ScheduledExecutorService scheduler,
      Executor control,
      Runnable pump,
      Consumer<DevicePluginEvent> events) {
    this.headroom = headroom;
    this.scheduler = scheduler;
    this.control = control;
    this.pump = pump;
    this.events = events;
  }

  /**
   * True when one more server may start now (counted as started); otherwise the starts are held.
   *
   * @param inFlight start-and-register rounds under way
   * @param waiting resources waiting to be started, for the report
   */
  boolean mayStart(int inFlight, int waiting) {
    if (headroom.tryStart(inFlight)) {
      return true;
    }
    hold(waiting);
    return false;
  }

  /** Nothing waits to be started any more (served, or retired while waiting). */
  void drained() {
    if (held) {
      resume();
    }
  }

  /** True while starts are held (an episode is under way). */
  boolean held() {
    return held;
  }

  /**
   * Starts wait: the process is within its reserve of open files. Looks again after {@link
   * FileHeadroom#RECOUNT}; says so once per episode (log, event).
   */
  private void hold(int waiting) {
    if (!held) {
      held = true;
      LOG.warn(
          "open files: {} of the limit of {} are in use; new device-plugin resources wait to be"
              + " served until files are freed ({} waiting now, see the metric"
              + " jakri_resources_waiting_open_files); raise the agent's open-files limit"
              + " (LimitNOFILE, or the container runtime's nofile ulimit) to serve more at once",
          headroom.lastCount().orElse(-1),
          headroom.limit().orElse(-1),
          waiting);
    }
    if (!recheckPending) {
      events.accept(
          new DevicePluginEvent.OpenFilesLow(
              waiting, headroom.lastCount().orElse(-1), headroom.limit().orElse(-1)));
      try {
        scheduler.schedule(
            () ->
                runOnControl(
                    () -> {
                      recheckPending = false;
                      pump.run();
                    }),
            FileHeadroom.RECOUNT.toMillis(),
            TimeUnit.MILLISECONDS);
        recheckPending = true;
      } catch (RejectedExecutionException e) {
        // closing
      }
    }
  }

  /** Nothing waits for files any more: the episode ends. */
  private void resume() {
    held = false;
    LOG.info(
        "open files: {} of the limit of {} in use; no device-plugin resource waits for files any"
            + " more",
        headroom.lastCount().orElse(-1),
        headroom.limit().orElse(-1));
    events.accept(
        new DevicePluginEvent.OpenFilesLow(
            0, headroom.lastCount().orElse(-1), headroom.limit().orElse(-1)));
  }

  private void runOnControl(Runnable task) {
    try {
      control.execute(task);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }
}
