package io.jakri.agent.discovery;

import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.LocalDevice;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.logging.LogText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One Configuration's discovery: its {@link DeviceTable} and feed lane, and its handler's
 * lifecycle. Starts the handler's discovery on the handler's own threads (abandoned after the call
 * timeout), restarts it with exponential backoff after it failed, coalesces the snapshots it
 * reports (only the newest one waiting is processed) and processes them on the discovery thread:
 * the table's changes go to the feed, refusals and the Configuration's status are reported.
 * Confined to the discovery thread, except its {@link HandlerReports}, whose listeners the handler
 * may call from any thread and which only queue work to the discovery thread.
 */
final class ConfigurationRun {

  // Logged as the discovery's own lines (operators grep for them, docs name the logger).
  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  private static final Duration MIN_RESTART = Duration.ofSeconds(1);
  // Installed handler names a HandlerMissing status lists before "... and N more".
  static final int INSTALLED_NAMES_SHOWN = 5;
  private static final Duration MAX_RESTART = Duration.ofMinutes(1);

  /**
   * What every run of one {@link DiscoveryManager} shares.
   *
   * @param loop the discovery thread
   * @param reports where what the handler does is reported (on the discovery thread)
   * @param neighbours the other Configurations on this node, as a run's table sees them
   * @param closed whether the discovery is closing
   */
  record Shared(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      DeviceTable.Rules rules,
      DeviceFeed feed,
      HandlerCalls calls,
      ScheduledExecutorService scheduler,
      Executor loop,
      ConfigurationStatuses statuses,
      Consumer<DiscoveryReport> reports,
      LongSupplier nanoTime,
      BooleanSupplier closed,
      Function<ConfigurationRun, DeviceTable.Neighbours> neighbours) {}

  private final Shared shared;
  private ConfigurationSpec spec;
  final DeviceTable table;
  final DeviceFeed.Lane lane;
  private final long addedNanos;
  private Discovery discovery;
  private DiscoveryHandler handler;
  private long runId;
  private int restartAttempts;
  private State state = State.DISCOVERING;
  private ScheduledFuture<?> restart;
  private final HandlerReports reports;
  private List<DiscoveredDevice> lastSnapshot = List.of();
  private String refusal;
  private boolean resultsReported;
  // A start is with the handler (its result comes back to the discovery thread).
  private boolean starting;
  // The last start was refused: the handler had too many stranded threads.
  private boolean waitingForThreads;
  // No longer one of the manager's runs (its Configuration went away, or the manager closed).
  private boolean retired;

  ConfigurationRun(ConfigurationSpec spec, Shared shared) {
    this.shared = shared;
    this.spec = spec;
    this.addedNanos = shared.nanoTime().getAsLong();
    this.table = new DeviceTable(shared.rules(), spec);
    this.reports =
        new HandlerReports(
            shared.loop(), shared.nanoTime(), shared.closed(), this::onSnapshot, this::reported);
    // A failed Instance write processes the last snapshot of this run again.
    this.lane =
        shared
            .feed()
            .lane(
                table,
                () -> {
                  long id = runId;
                  return () -> reprocess(id);
                });
  }

  ConfigurationSpec spec() {
    return spec;
  }

  /**
   * Takes {@code next}, a new spec of the same Configuration: the devices take its capacity and
   * brokerProperties at once, and the discovery restarts when its handler, details or properties
   * changed (or it is not running). When the devices may not keep the new spec in place (refused,
   * or a larger capacity may no longer fit the slot limits) the discovery starts afresh instead, so
   * the devices are admitted again within the limits (none is kept half-applied).
   */
  void respecify(ConfigurationSpec next) {
    ConfigurationSpec old = spec;
    spec = next;
    DeviceFeed feed = shared.feed();
    if (!table.admitsInPlace(next)) {
      stopDiscovery();
      cancelTimers();
      feed.now(lane, table.clear(), shared.nanoTime().getAsLong());
      table.respecify(next);
      start();
      return;
    }
    feed.now(lane, table.respecify(next), shared.nanoTime().getAsLong());
    if (old.discoveryDiffers(next) || !active()) {
      stopDiscovery();
      resetBackoff();
      start();
    }
  }

  /** Stops for good (the Configuration went away): its devices are withdrawn. */
  void remove() {
    retire();
    stopDiscovery();
    cancelTimers();
    shared.feed().now(lane, table.clear(), shared.nanoTime().getAsLong());
    lane.close();
  }

  /**
   * The handler went away or was replaced: the discovery stops and its devices vanish (offline,
   * removed after the grace unless found again). Returns the close (see {@link #stopDiscovery}).
   */
  CompletableFuture<?> handlerGone() {
    CompletableFuture<?> closing = stopDiscovery();
    DeviceFeed feed = shared.feed();
    feed.vanished(lane, table.vanishAll(feed.now()), shared.nanoTime().getAsLong());
    return closing;
  }

  /** Writes {@code instanceName}'s Instance again when it is one of this run's online devices. */
  void republish(String instanceName) {
    Optional<LocalDevice> device = table.get(instanceName).filter(LocalDevice::online);
    if (device.isPresent()) {
      LOG.info("instance {}: changed elsewhere while its device is here; restoring", instanceName);
      shared
          .feed()
          .now(
              lane,
              List.of(new DeviceChange.Rewritten(device.get())),
              shared.nanoTime().getAsLong());
    }
  }

  State state() {
    return state;
  }

  /** Whether the handler's discovery runs or is being started. */
  boolean active() {
    return discovery != null || starting;
  }

  /** The handler the discovery runs on (or is being started with), if any. */
  DiscoveryHandler handler() {
    return handler;
  }

  /** Whether the last start was refused because the handler had too many stranded threads. */
  boolean waitingForThreads() {
    return waitingForThreads;
  }

  /** Whether devices of this run are refused (for their class or the slot limits). */
  boolean refusing() {
    return refusal != null;
  }

  /** No longer one of the manager's runs: late starts, failures and snapshots are ignored. */
  void retire() {
    retired = true;
  }

  /** The next start is a first one again (no backoff carried over). */
  void resetBackoff() {
    restartAttempts = 0;
  }

  /** Milliseconds before restart number {@code attempts} (from 0): 1 s doubling up to 1 min. */
  static long restartDelayMillis(int attempts) {
    return Math.min(MAX_RESTART.toMillis(), MIN_RESTART.toMillis() << Math.min(attempts, 6));
  }

  /** Processes the last snapshot of run {@code id} again, unless a snapshot is waiting already. */
  void reprocess(long id) {
    reports.again(id, lastSnapshot);
  }

  /** {@link #reprocess} for the current run. */
  void reprocess() {
    reprocess(runId);
  }

  /**
   * Starts the handler's discovery: hands the start to the handler's threads and returns; the
   * result comes back to the discovery thread. A missing handler, refused brokerProperties or
   * unresolvable discoveryProperties set the status instead.
   */
  void start() {
    if (shared.closed().getAsBoolean()) {
      return;
    }
    cancelRestart();
    ConfigurationSpec spec = this.spec;
    HandlerRegistry handlers = shared.handlers();
    Optional<DiscoveryHandler> found = handlers.find(spec.handlerName());
    if (found.isEmpty()) {
      status(
          State.HANDLER_MISSING,
          "discovery handler \""
              + spec.handlerName()
              + "\" is not installed (installed: ["
              // The first few: a node with hundreds of registered handlers must not make this
              // status, its Event and its log line hundreds of names long.
              + LogText.firstFew(handlers.names(), INSTALLED_NAMES_SHOWN)
              + "]); waiting for it");
      return;
    }
    Optional<String> reservedEnv = shared.rules().reservedEnvRefusal(spec);
    if (reservedEnv.isPresent()) {
      if (!reservedEnv.get().equals(shared.statuses().message(spec.name()))) {
        refused(Refusal.RESERVED_ENV);
      }
      status(State.INVALID, reservedEnv.get());
      return;
    }
    Map<String, String> props;
    try {
      props = shared.properties().resolve(spec);
    } catch (PropertyResolver.UnresolvableException e) {
      status(State.INVALID, e.getMessage());
      return;
    }
    DiscoveryHandler h = found.get();
    String name = spec.handlerName();
    HandlerCalls calls = shared.calls();
    DiscoveryContext context = calls.context(h, name, spec, shared.node(), props);
    long id = ++runId;
    handler = h;
    starting = true;
    waitingForThreads = false;
    // On the handler's own thread; the discovery thread goes on and hears back when it is done.
    calls
        .start(h, name, context, reports.listener(id))
        .whenComplete(
            (started, error) -> {
              try {
                shared.loop().execute(() -> started(id, h, started, error));
              } catch (RejectedExecutionException e) {
                if (started != null) {
                  calls.closeLate(h, name, spec.name(), started);
                }
              }
            });
  }

  /** A start handed to the handler's threads ended. Discovery thread. */
  private void started(long id, DiscoveryHandler h, Discovery started, Throwable error) {
    if (shared.closed().getAsBoolean() || retired || runId != id) {
      // Stopped (or started again) meanwhile: this discovery is not wanted any more.
      if (started != null) {
        shared.calls().closeLate(h, spec.handlerName(), spec.name(), started);
      }
      return;
    }
    starting = false;
    if (error == null && started == null) {
      error = new IllegalStateException("start returned no discovery");
    }
    if (error == null) {
      discovery = started;
      restartAttempts = 0;
      // A snapshot reported from within start() may have been processed already: its refusal
      // stands.
      if (refusal == null) {
        status(State.DISCOVERING, "discovering with handler " + spec.handlerName());
      }
      shared
          .reports()
          .accept(new DiscoveryReport.DiscoveryStarted(spec.handlerName(), spec.name()));
      return;
    }
    HandlerCalls.StartFailure failure = HandlerCalls.failure(spec.handlerName(), error);
    waitingForThreads = failure.failure() == HandlerFailure.STRANDED_LIMIT;
    handlerFailed(failure.failure());
    if (failure.state() == State.INVALID) {
      status(State.INVALID, failure.message());
    } else {
      fail(failure.message());
    }
  }

  /** Stops the discovery and starts it again after the backoff. */
  private void fail(String reason) {
    stopDiscovery();
    long delay = restartDelayMillis(restartAttempts);
    restartAttempts++;
    status(State.FAILED, reason + "; restarting in " + delay + " ms");
    restart =
        shared
            .scheduler()
            .schedule(
                () ->
                    shared
                        .loop()
                        .execute(
                            () -> {
                              if (!retired && discovery == null && !starting) {
                                start();
                              }
                            }),
                delay,
                TimeUnit.MILLISECONDS);
  }

  /**
   * Stops reporting at once and closes the discovery on the handler's threads (a start still with
   * the handler is closed when it returns). The future completes when the close returned, failed or
   * was abandoned.
   */
  CompletableFuture<?> stopDiscovery() {
    runId++; // late snapshots of the old run are ignored, and so is a start still running
    starting = false;
    DiscoveryHandler h = handler;
    handler = null;
    Discovery d = discovery;
    discovery = null;
    if (d == null) {
      return CompletableFuture.completedFuture(null);
    }
    return shared.calls().close(h, spec.handlerName(), spec.name(), d);
  }

  void cancelRestart() {
    if (restart != null) {
      restart.cancel(false);
      restart = null;
    }
  }

  void cancelTimers() {
    cancelRestart();
    lane.cancelTimers();
  }

  /** Sets this Configuration's status (the device count is the table's). */
  void status(State next, String message) {
    state = next;
    shared.statuses().set(spec.name(), next, message, table.size());
  }

  /** Run {@code id} reported failure: restarted after the backoff, unless stale. */
  private void reported(long id, String reason, Throwable cause) {
    if (runId == id && !retired) {
      handlerFailed(HandlerFailure.REPORTED_FAILURE);
      fail(
          "handler "
              + spec.handlerName()
              + " reported failure: "
              + reason
              + (cause == null ? "" : " (" + cause + ")"));
    }
  }

  /** Processes the newest snapshot waiting, if it is of the current run. Discovery thread. */
  private void onSnapshot() {
    HandlerReports.Pending waiting = reports.take().orElse(null);
    if (waiting == null || retired || runId != waiting.runId()) {
      return;
    }
    List<DiscoveredDevice> snapshot = waiting.devices();
    lastSnapshot = snapshot;
    shared.reports().accept(new DiscoveryReport.Snapshot(spec.handlerName()));
    if (!resultsReported) {
      resultsReported = true;
      long took = shared.nanoTime().getAsLong() - addedNanos;
      shared.reports().accept(new DiscoveryReport.FirstResults(spec.name(), took));
    }
    DeviceFeed feed = shared.feed();
    DeviceTable.Outcome outcome =
        table.apply(snapshot, feed.now(), shared.neighbours().apply(this));
    for (String warning : outcome.warnings()) {
      LOG.warn("configuration {}: {}", spec.name(), warning);
    }
    outcome
        .refusedEntries()
        .forEach(
            (kind, count) ->
                shared.reports().accept(new DiscoveryReport.EntriesRefused(kind, count)));
    feed.snapshot(lane, outcome.changes(), waiting.reportedNanos());
    Optional<String> refused = outcome.refusal();
    if (refused.isPresent()) {
      if (!refused.get().equals(refusal)) {
        if (outcome.classRefusal().isPresent()) {
          refused(Refusal.CLASS);
        }
        if (outcome.slotRefusal().isPresent()) {
          refused(Refusal.SLOTS);
        }
      }
      refusal = refused.get();
      status(State.INVALID, refused.get());
      return;
    }
    if (refusal != null) {
      refusal = null;
      status(State.DISCOVERING, "discovering with handler " + spec.handlerName());
      return;
    }
    status(state, shared.statuses().message(spec.name()));
  }

  private void refused(Refusal reason) {
    shared.reports().accept(new DiscoveryReport.Refused(reason));
  }

  private void handlerFailed(HandlerFailure failure) {
    shared.reports().accept(new DiscoveryReport.HandlerFailed(spec.handlerName(), failure));
  }
}
