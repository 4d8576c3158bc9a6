package io.jakri.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/**
 * "A peer appears → advertised" runs against a handler that polls (coap rounds, modbus scans), next
 * to a floor that polls in step with it. The Configuration lists an endpoint of the bench's first
 * (the marker); each time a round of the handler reaches it the scenario calls {@link
 * #roundStarted()}, and the floor's bare request goes to the current run's peer at once: at the
 * moments of the handler's own requests, so both wait for the same round, and what the figure has
 * over the floor is the handler's and the agent's own work. Each run's peer is started at a given
 * phase of the round period after a round start; spreading the phases over the runs spreads the
 * wait for the next round as peers appearing at random moments would (half a period on average).
 * {@link #roundStarted()} is thread-safe; the rest is for one thread.
 */
final class PollingRuns implements AutoCloseable {

  /** The floor's bare request to the run's peer: true when the peer answered it properly. */
  interface Probe {
    boolean answered() throws Exception;
  }

  /** Starts the run's peer. */
  interface Peer {
    void start() throws Exception;
  }

  /** One run's moments ({@link System#nanoTime()}): peer started, the floor's first answer. */
  record Timing(long startedAt, long floorAt) {}

  private static final class Run {
    final Peer peer;
    final Probe probe;
    final long offsetNanos;
    final AtomicBoolean armed = new AtomicBoolean(true);
    volatile long startedAt;
    volatile long floorAt;
    volatile Exception failure;

    Run(Peer peer, Probe probe, long offsetNanos) {
      this.peer = peer;
      this.probe = probe;
      this.offsetNanos = offsetNanos;
    }
  }

  private final ScheduledExecutorService executor =
      Executors.newScheduledThreadPool(
          2,
          r -> {
            Thread t = new Thread(r, "bench-polling-runs");
            t.setDaemon(true);
            return t;
          });
  private final List<Long> roundStarts = new CopyOnWriteArrayList<>();
  private volatile Run current;

  /** The marker was reached by a round of the handler. */
  void roundStarted() {
    roundStarts.add(System.nanoTime());
    Run run = current;
    if (run == null) {
      return;
    }
    if (run.startedAt != 0 && run.floorAt == 0) {
      executor.execute(() -> probe(run));
    }
    if (run.armed.compareAndSet(true, false)) {
      executor.schedule(() -> start(run), run.offsetNanos, TimeUnit.NANOSECONDS);
    }
  }

  private static void start(Run run) {
    run.startedAt = System.nanoTime();
    try {
      run.peer.start();
    } catch (Exception e) {
      run.failure = e;
    }
  }

  private static void probe(Run run) {
    try {
      if (run.probe.answered()) {
        run.floorAt = System.nanoTime();
      }
    } catch (Exception e) {
      // refused, or no answer in time: the next round asks again
    }
  }

  /** Rounds of the handler seen so far. */
  int rounds() {
    return roundStarts.size();
  }

  /** The median time between round starts so far, in ms (NaN before two rounds). */
  double periodMs() {
    List<Double> gaps = new ArrayList<>();
    for (int i = 1; i < roundStarts.size(); i++) {
      gaps.add((roundStarts.get(i) - roundStarts.get(i - 1)) / 1e6);
    }
    return Stats.median(gaps);
  }

  /**
   * One run: {@code peer} started {@code phase} (0 to 1) of a round period after the next round
   * starts, the floor probing it from the round after; waits (the agent's deadline) until the floor
   * has its answer and {@code advertised} holds.
   */
  Timing run(
      HandlerAgentRun agent,
      double phase,
      Peer peer,
      Probe probe,
      BooleanSupplier advertised,
      String what)
      throws InterruptedException {
    double period = periodMs();
    Run run = new Run(peer, probe, Double.isNaN(period) ? 0 : (long) (phase * period * 1e6));
    current = run;
    try {
      agent.await(
          () -> run.failure != null || (run.floorAt != 0 && advertised.getAsBoolean()), what);
    } finally {
      current = null;
    }
    if (run.failure != null) {
      throw new IllegalStateException(what + ": the peer did not start", run.failure);
    }
    return new Timing(run.startedAt, run.floorAt);
  }

  @Override
  public void close() {
    executor.shutdownNow();
  }
}
