package io.jakri.agent.discovery;

import java.time.Duration;
import java.util.Set;

/**
 * How long the agent waits for a discovery handler and how many of its threads it gives up on.
 *
 * @param callTimeout how long a call into a handler ({@code validate}, {@code start}, {@code
 *     close}) and a task on the handler's scheduler may run before the agent abandons the thread
 *     running it (the thread keeps running; it is counted as stranded until it returns)
 * @param strandedThreads the most stranded threads a handler may have: once it has that many, its
 *     starts are refused (with a status message saying so) and its scheduler gets no new thread,
 *     until one of them returns
 * @param switchedOff handler names the operator switched off on this node ({@code
 *     --disable-handlers}, the chart's {@code <handler>.discovery.enabled: false}): a Configuration
 *     naming one finds no handler, as if it were not installed
 */
public record HandlerLimits(Duration callTimeout, int strandedThreads, Set<String> switchedOff) {

  /** The default {@link #callTimeout}. */
  public static final Duration DEFAULT_CALL_TIMEOUT = Duration.ofSeconds(10);

  /** The default {@link #strandedThreads}. */
  public static final int DEFAULT_STRANDED_THREADS = 4;

  public HandlerLimits(Duration callTimeout, int strandedThreads) {
    this(callTimeout, strandedThreads, Set.of());
  }

  public HandlerLimits {
    switchedOff = Set.copyOf(switchedOff);
    if (callTimeout.isNegative() || callTimeout.isZero()) {
      throw new IllegalArgumentException("callTimeout must be positive");
    }
    if (strandedThreads < 1) {
      throw new IllegalArgumentException("strandedThreads must be at least 1");
    }
  }

  public static HandlerLimits defaults() {
    return new HandlerLimits(DEFAULT_CALL_TIMEOUT, DEFAULT_STRANDED_THREADS);
  }
}
