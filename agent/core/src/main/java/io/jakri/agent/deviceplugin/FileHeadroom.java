package io.jakri.agent.deviceplugin;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.OptionalLong;

/**
 * Whether another device-plugin server may start without running the process out of open files.
 *
 * <p>Each served resource holds a listening socket and the agent's end of the kubelet's connection
 * to it ({@value #FILES_PER_SERVER} files; bench/README.md measures it). Once the process's open
 * files come within a reserve of its limit ({@code RLIMIT_NOFILE}), starting more would make every
 * bind, dial and file open of the agent fail at random: the kubelet connection, the API server's,
 * the metrics port, plugin jars. Past that line new servers wait (they stay discovered and are
 * served once files are freed) and the agent keeps serving what it serves.
 *
 * <p>The reserve is a two-hundredth of the limit, at least {@value #MIN_RESERVE} and at most
 * {@value #MAX_RESERVE} files: the agent's own files (API and kubelet connections, plugin jars,
 * metrics) are a few dozen. Counting open files lists {@code /proc/self/fd}, which costs
 * milliseconds at tens of thousands of files, so it is counted again only once the starts since the
 * last count may have used half the room left (so a server that costs more than estimated, such as
 * one whose kubelet runs in the same process, cannot overshoot the line), or the count is older
 * than {@link #STALE}; while over the line, at most every {@link #RECOUNT}. Confined to one thread
 * (the manager's control thread).
 */
final class FileHeadroom {

  /** Files one served resource holds: its listening socket and the kubelet's connection. */
  static final int FILES_PER_SERVER = 2;

  static final long MIN_RESERVE = 64;
  static final long MAX_RESERVE = 1024;

  /** How often the open files are counted again while over the line. */
  static final Duration RECOUNT = Duration.ofMillis(500);

  /** How long a count stands while under the line (files opened by others are seen then). */
  static final Duration STALE = Duration.ofSeconds(5);

  private final OpenFiles files;
  private final Clock clock;
  private long counted = -1;
  private long startsSinceCount;
  private Instant countedAt = Instant.MIN;
  private boolean over;

  FileHeadroom(OpenFiles files, Clock clock) {
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
   * The last count (with the unsettled starts' files), for reports; empty before the first count or
   * when unknown.
   */
  OptionalLong lastCount() {
    return counted < 0 ? OptionalLong.empty() : OptionalLong.of(counted);
  }

  /** The limit. */
  OptionalLong limit() {
    return files.limit();
  }
}
