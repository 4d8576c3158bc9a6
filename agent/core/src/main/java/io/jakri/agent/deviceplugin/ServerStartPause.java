package io.jakri.agent.deviceplugin;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;
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
 * DevicePluginReport.OpenFilesLow} report with the resources waiting) and ends once nothing waits
 * any more (one INFO, the report with 0). While held, the manager's {@code pump} is run again on
 * the control executor after {@link FileHeadroom#RECOUNT}. Confined to the manager's control
 * thread.
 */
final class ServerStartPause {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);

  private final FileHeadroom headroom;
  private final ScheduledExecutorService scheduler;
  private final Executor control;
  private final Runnable pump;
  private final Consumer<DevicePluginReport> reports;
  private boolean held;
  private boolean recheckPending;

  /**
   * @param pump starts what waits, as far as files allow (it calls {@link #mayStart} and {@link
   *     #drained}); run on {@code control}
   * @param reports must not throw
   */
  ServerStartPause(
      FileHeadroom headroom,
      ScheduledExecutorService scheduler,
      Executor control,
      Runnable pump,
      Consumer<DevicePluginReport> reports) {
    this.headroom = headroom;
    this.scheduler = scheduler;
    this.control = control;
    this.pump = pump;
    this.reports = reports;
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
   * FileHeadroom#RECOUNT}; says so once per episode (log, report).
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
      reports.accept(
          new DevicePluginReport.OpenFilesLow(
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
    reports.accept(
        new DevicePluginReport.OpenFilesLow(
            0, headroom.lastCount().orElse(-1), headroom.limit().orElse(-1)));
  }

  private void runOnControl(Runnable task) {
    try {
      control.execute(task);
    } catch (RejectedExecutionException e) {
      // closing
    }
  }

  /**
   * Whether another device-plugin server may start without running the process out of open files.
   *
   * <p>Each served resource holds a listening socket and the agent's end of the kubelet's
   * connection to it ({@value #FILES_PER_SERVER} files; bench/README.md measures it). Once the
   * process's open files come within a reserve of its limit ({@code RLIMIT_NOFILE}), starting more
   * would make every bind, dial and file open of the agent fail at random: the kubelet connection,
   * the API server's, the metrics port, plugin jars. Past that line new servers wait (they stay
   * discovered and are served once files are freed) and the agent keeps serving what it serves.
   *
   * <p>The reserve is a two-hundredth of the limit, at least {@value #MIN_RESERVE} and at most
   * {@value #MAX_RESERVE} files: the agent's own files (API and kubelet connections, plugin jars,
   * metrics) are a few dozen. Counting open files lists {@code /proc/self/fd}, which costs
   * milliseconds at tens of thousands of files, so it is counted again only once the starts since
   * the last count may have used half the room left (so a server that costs more than estimated,
   * such as one whose kubelet runs in the same process, cannot overshoot the line), or the count is
   * older than {@link #STALE}; while over the line, at most every {@link #RECOUNT}. Confined to one
   * thread (the manager's control thread).
   */
  static final class FileHeadroom {

    /** Files one served resource holds: its listening socket and the kubelet's connection. */
    static final int FILES_PER_SERVER = 2;

    static final long MIN_RESERVE = 64;
    static final long MAX_RESERVE = 1024;

    /** How often the open files are counted again while over the line. */
    static final Duration RECOUNT = Duration.ofMillis(500);

    /** How long a count stands while under the line (files opened by others are seen then). */
    static final Duration STALE = Duration.ofSeconds(5);

    private final DevicePluginManager.OpenFiles files;
    private final Clock clock;
    private long counted = -1;
    private long startsSinceCount;
    private Instant countedAt = Instant.MIN;
    private boolean over;

    FileHeadroom(DevicePluginManager.OpenFiles files, Clock clock) {
      this.files = files;
      this.clock = clock;
    }

    /**
     * The line past which no server starts, for {@code limit} files; empty when unlimited/unknown.
     */
    static OptionalLong line(OptionalLong limit) {
      if (limit.isEmpty() || limit.getAsLong() <= 0 || limit.getAsLong() == Long.MAX_VALUE) {
        return OptionalLong.empty();
      }
      long max = limit.getAsLong();
      long reserve = Math.max(MIN_RESERVE, Math.min(MAX_RESERVE, max / 200));
      return OptionalLong.of(Math.max(0, max - reserve));
    }

    /**
     * True when one more server may start now; counts it as started.
     *
     * @param unsettled servers started whose files may not all be open yet (their start and the
     *     kubelet's dial still under way): counted as if they were
     */
    boolean tryStart(int unsettled) {
      OptionalLong line = line(files.limit());
      if (line.isEmpty()) {
        return true;
      }
      Instant now = clock.instant();
      long estimated = FILES_PER_SERVER * (startsSinceCount + 1);
      boolean fresh =
          counted >= 0
              && !over
              && now.isBefore(countedAt.plus(STALE))
              && counted + estimated <= line.getAsLong()
              && estimated <= Math.max(FILES_PER_SERVER, (line.getAsLong() - counted) / 2);
      if (!fresh) {
        if (over && now.isBefore(countedAt.plus(RECOUNT))) {
          return false;
        }
        OptionalLong open = files.open();
        if (open.isEmpty()) {
          return true;
        }
        counted = open.getAsLong() + (long) FILES_PER_SERVER * unsettled;
        countedAt = now;
        startsSinceCount = 0;
        over = counted + FILES_PER_SERVER > line.getAsLong();
        if (over) {
          return false;
        }
      }
      startsSinceCount++;
      return true;
    }

    /** True while the last count was over the line (starts wait). */
    boolean over() {
      return over;
    }

    /**
     * The last count (with the unsettled starts' files), for reports; empty before the first count
     * or when unknown.
     */
    OptionalLong lastCount() {
      return counted < 0 ? OptionalLong.empty() : OptionalLong.of(counted);
    }

    /** The limit. */
    OptionalLong limit() {
      return files.limit();
    }
  }
}
