package io.jakri.agent.discovery;

import io.jakri.agent.allocation.EnvContract;
import io.jakri.agent.allocation.LocalDevice;
import io.jakri.agent.configuration.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one discovery per Configuration and hands what its snapshots change to one {@link Sink}.
 *
 * <p>Each Configuration's devices and the rules that admit them live in its {@link DeviceTable};
 * this class runs the handlers around the tables: starts a handler's discovery (abandoned after a
 * timeout), restarts it with exponential backoff when it throws or reports failure, coalesces
 * snapshots (only the newest pending snapshot of a run is processed), ends offline graces on a
 * timer, and writes devices in fair turns between Configurations. All state lives on one discovery
 * thread: Configuration changes, snapshots, handler failures and timers are queued to it. Handler
 * code ({@code validate}, {@code start}, {@code close}, the handler's timers) runs only on the
 * handler's own threads ({@link HandlerThreads}), never on the discovery thread or the agent's
 * scheduler: the discovery thread hands a start to them and goes on with other work, so a handler
 * that never returns holds up nothing but its own Configurations. Public methods may be called from
 * any thread.
 */
public final class DiscoveryManager implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  /** Most devices taken from one snapshot. */
  public static final int MAX_DEVICES = DeviceTable.MAX_DEVICES;

  private static final Duration MIN_RESTART = Duration.ofSeconds(1);
  private static final Duration MAX_RESTART = Duration.ofMinutes(1);

  private final String node;
  private final HandlerRegistry handlers;
  private final PropertyResolver properties;
  private final DeviceFeed feed;
  private final ScheduledExecutorService scheduler;
  private final DeviceTable.Rules rules;
  private final ExecutorService loop;
  private final HandlerThreads handlerThreads;
  private final Map<String, Run> runs = new HashMap<>();
  private final Map<String, ConfigurationStatus> statuses =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final List<Runnable> statusListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final LongSupplier nanoTime;
  private volatile boolean closed;

  /**
   * Told what the handlers do, for metrics. The {@code handler} argument is the handler name (or
   * alias) a Configuration asks for, and only ever one that is installed, so its values are bounded
   * by the installed plugins. Called on the discovery thread; must not block or throw.
   */
  public interface Listener {

    /**
     * A handler's snapshot was processed (snapshots arriving faster are coalesced first; one
     * processed again after a failed Instance write counts again).
     */
    default void snapshot(String handler) {}

    /** A handler failed (its discovery is restarted with backoff, or waits for a fixed one). */
    default void handlerFailed(String handler, HandlerFailure failure) {}

    /** The agent newly refused (part of) a Configuration: see {@link Refusal}. */
    default void refused(Refusal refusal) {}

    /** A handler started a Configuration's discovery (first start or a restart). */
    default void discoveryStarted(String handler, String configuration) {}

    /**
     * A Configuration's first snapshot was processed, {@code nanos} after the agent first saw the
     * Configuration (once per Configuration while it stays).
     */
    default void firstResults(String configuration, long nanos) {}
  }

  /** Why the agent refuses a Configuration, or some of its devices. */
  public enum Refusal {
    /** Devices in a class the Configuration may not use ({@link ClassPolicy}). */
    CLASS,
    /** brokerProperties set a reserved env name and the operator did not allow it. */
    RESERVED_ENV,
    /** Devices beyond the slot limits ({@link SlotLimits}). */
    SLOTS
  }

  /** How a handler failed. */
  public enum HandlerFailure {
    /** {@code validate} or {@code start} threw. */
    START_FAILED,
    /** {@code start} did not return in time. */
    START_TIMEOUT,
    /** The handler refused the Configuration's discoveryDetails. */
    INVALID_DETAILS,
    /** A running discovery reported failure. */
    REPORTED_FAILURE,
    /**
     * Not started: the handler has as many stranded threads (calls that never returned) as {@link
     * HandlerLimits} allows.
     */
    STRANDED_LIMIT
  }

  /** What is happening with one Configuration, for status reporting. */
  public record ConfigurationStatus(State state, String message, int devices) {}

  /** The phases of one Configuration's discovery. */
  public enum State {
    DISCOVERING,
    HANDLER_MISSING,
    INVALID,
    FAILED
  }

  /**
   * @param sink where each device change goes, in order
   * @param nanoTime the clock of snapshot report times and of the offline grace ({@code
   *     System::nanoTime})
   */
  public DiscoveryManager(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      DeviceSink sink,
      ScheduledExecutorService scheduler,
      Duration offlineGrace,
      LongSupplier nanoTime) {
    this(
        node,
        handlers,
        properties,
        sink,
        scheduler,
        offlineGrace,
        nanoTime,
        ClassPolicy.defaults(),
        false,
        SlotLimits.defaults(),
        HandlerLimits.defaults());
  }

  /**
   * @param scheduler the agent's scheduler, for the manager's own timers; handlers never get it
   * @param classPolicy which class resources a Configuration's devices may join
   * @param allowReservedBrokerEnv whether brokerProperties may set reserved env names
   * @param slotLimits the most slots per Configuration and in all
   * @param handlerLimits how long a handler call may take and how many threads a handler may strand
   */
  public DiscoveryManager(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      DeviceSink sink,
      ScheduledExecutorService scheduler,
      Duration offlineGrace,
      LongSupplier nanoTime,
      ClassPolicy classPolicy,
      boolean allowReservedBrokerEnv,
      SlotLimits slotLimits,
      HandlerLimits handlerLimits) {
    this.rules =
        new DeviceTable.Rules(node, offlineGrace, classPolicy, slotLimits, allowReservedBrokerEnv);
    this.node = node;
    this.nanoTime = nanoTime;
    this.handlers = handlers;
    this.properties = properties;
    this.scheduler = scheduler;
    this.loop = Executors.newSingleThreadExecutor(named("jakri-discovery"));
    this.feed = new DeviceFeed(sink, loop, scheduler, nanoTime, offlineGrace, () -> closed);
    this.handlerThreads = new HandlerThreads(scheduler, handlerLimits, this::onThreadFreed);
    handlers.addListener(this::onHandlersChanged);
  }

  /** Makes the running discoveries match {@code desired} (by name). Returns at once. */
  public void apply(Collection<ConfigurationSpec> desired) {
    if (closed) {
      return;
    }
    List<ConfigurationSpec> copy = List.copyOf(desired);
    loop.execute(() -> reconcile(copy));
  }

  /** The status of every known Configuration. */
  public Map<String, ConfigurationStatus> statuses() {
    return Map.copyOf(statuses);
  }

  /**
   * Stranded threads by handler name: calls into the handler and tasks on its scheduler that ran
   * past the call timeout and have not returned yet (see {@link HandlerLimits}).
   */
  public Map<String, Integer> strandedThreads() {
    return handlerThreads.stranded();
  }

  /** Registers a listener told about snapshots, handler failures and refusals. */
  public void addListener(Listener listener) {
    listeners.add(listener);
  }

  /** Registers {@code listener}, run (on the discovery thread) after any status changed. */
  public void addStatusListener(Runnable listener) {
    statusListeners.add(listener);
  }

  /**
   * Writes a locally seen device's Instance again (e.g. after someone deleted the Instance or
   * removed this node from it while the device is still here). No-op unless the device is online on
   * this node. Returns at once.
   */
  public void republish(String instanceName) {
    loop.execute(
        () -> {
          for (Run run : runs.values()) {
            Optional<LocalDevice> device = run.table.get(instanceName).filter(LocalDevice::online);
            if (device.isPresent()) {
              LOG.info(
                  "instance {}: changed elsewhere while its device is here; restoring",
                  instanceName);
              feed.now(
                  run.lane,
                  List.of(new DeviceChange.Rewritten(device.get())),
                  nanoTime.getAsLong());
            }
          }
        });
  }

  /**
   * Runs the discovery of Configuration {@code name} again from the start, resolving its
   * discoveryProperties afresh (e.g. after a Secret it reads changed). Its devices stay until the
   * new discovery reports otherwise. No-op for an unknown Configuration. Returns at once.
   */
  public void rediscover(String name) {
    if (closed) {
      return;
    }
    loop.execute(
        () -> {
          Run run = runs.get(name);
          if (run == null || closed) {
            return;
          }
          run.stopDiscovery();
          run.restartAttempts = 0;
          start(run);
        });
  }

  /**
   * Removes this node from each named Instance that no running discovery reports (left over from
   * before a restart, or of a Configuration deleted meanwhile). Returns at once.
   */
  public void releaseUnknown(Collection<String> instanceNames) {
    List<String> names = List.copyOf(instanceNames);
    loop.execute(
        () -> {
          for (String name : names) {
            boolean known = runs.values().stream().anyMatch(r -> r.table.contains(name));
            if (!known) {
              LOG.info(
                  "instance {}: not discovered on node {} since start; leaving it", name, node);
              feed.release(name);
            }
          }
        });
  }

  @Override
  public void close() {
    closed = true;
    try {
      List<CompletableFuture<?>> closing =
          loop.submit(
                  () -> {
                    List<CompletableFuture<?>> all = new ArrayList<>();
                    for (Run run : runs.values()) {
                      run.cancelTimers();
                      all.add(run.stopDiscovery());
                    }
                    runs.clear();
                    return all;
                  })
              .get(30, TimeUnit.SECONDS);
      awaitClosed(closing);
    } catch (Exception e) {
      LOG.warn("discovery did not stop cleanly: {}", e.toString());
    }
    loop.shutdown();
    handlerThreads.close();
  }

  // ---- discovery thread ----

  private void reconcile(List<ConfigurationSpec> desired) {
    Map<String, ConfigurationSpec> wanted = new LinkedHashMap<>();
    for (ConfigurationSpec spec : desired) {
      wanted.put(spec.name(), spec);
    }
    for (String name : new ArrayList<>(runs.keySet())) {
      if (!wanted.containsKey(name)) {
        Run run = runs.remove(name);
        run.stopDiscovery();
        run.cancelTimers();
        feed.now(run.lane, run.table.clear(), nanoTime.getAsLong());
        run.lane.close();
        statuses.remove(name);
        notifyStatus();
        LOG.info("configuration {}: removed; discovery stopped", name);
        // Classes it served may be free for Configurations refused them.
        for (Run other : runs.values()) {
          if (other.refusal != null
              && other.pending.compareAndSet(
                  null, new Pending(other.runId, other.lastSnapshot, nanoTime.getAsLong()))) {
            loop.execute(() -> onSnapshot(other));
          }
        }
      }
    }
    for (ConfigurationSpec spec : wanted.values()) {
      Run run = runs.get(spec.name());
      if (run == null) {
        run = new Run(spec);
        run.addedNanos = nanoTime.getAsLong();
        runs.put(spec.name(), run);
        LOG.info("configuration {}: added (handler {})", spec.name(), spec.handlerName());
        logBrokerPropertyDrops(spec);
        start(run);
      } else if (!run.spec.equals(spec)) {
        ConfigurationSpec old = run.spec;
        run.spec = spec;
        LOG.info("configuration {}: changed", spec.name());
        if (!old.brokerProperties().equals(spec.brokerProperties())) {
          logBrokerPropertyDrops(spec);
        }
        if (!run.table.admitsInPlace(spec)) {
          // Refused, or a capacity that the devices may no longer all have: start afresh, so the
          // devices are admitted again within the limits (none is kept half-applied).
          run.stopDiscovery();
          run.cancelTimers();
          feed.now(run.lane, run.table.clear(), nanoTime.getAsLong());
          run.table.respecify(spec);
          start(run);
          continue;
        }
        // Existing devices take the new capacity and brokerProperties at once.
        feed.now(run.lane, run.table.respecify(spec), nanoTime.getAsLong());
        if (old.discoveryDiffers(spec) || (run.discovery == null && !run.starting)) {
          run.stopDiscovery();
          run.restartAttempts = 0;
          start(run);
        }
      }
    }
  }

  /**
   * Called by the registry (never from the discovery thread) after handlers were added, replaced or
   * removed, and before a removed plugin's classes are unloaded: waits until every discovery of a
   * handler that went away or changed is closed.
   */
  private void onHandlersChanged() {
    if (closed) {
      return;
    }
    try {
      // The closes run on the handlers' threads; the discovery thread does not wait for them.
      awaitClosed(loop.submit(this::handlersChanged).get(30, TimeUnit.SECONDS));
      Set<DiscoveryHandler> installed =
          java.util.Collections.newSetFromMap(new IdentityHashMap<>());
      for (String name : handlers.names()) {
        handlers.find(name).ifPresent(installed::add);
      }
      handlerThreads.retainOnly(installed);
    } catch (Exception e) {
      LOG.warn("reacting to handler changes took too long: {}", e.toString());
    }
  }

  /** Waits (bounded by the handler call timeout: closes that hang are abandoned) for closes. */
  private static void awaitClosed(List<CompletableFuture<?>> closing) throws InterruptedException {
    try {
      CompletableFuture.allOf(closing.toArray(CompletableFuture[]::new))
          .exceptionally(e -> null)
          .get(30, TimeUnit.SECONDS);
    } catch (java.util.concurrent.ExecutionException | TimeoutException e) {
      LOG.warn("handler closes did not finish: {}", e.toString());
    }
  }

  private List<CompletableFuture<?>> handlersChanged() {
    List<CompletableFuture<?>> closing = new ArrayList<>();
    for (Run run : runs.values()) {
      Optional<DiscoveryHandler> now = handlers.find(run.spec.handlerName());
      if ((run.discovery != null || run.starting) && (now.isEmpty() || now.get() != run.handler)) {
        LOG.info(
            "configuration {}: handler {} was {}; stopping its discovery",
            run.spec.name(),
            run.spec.handlerName(),
            now.isEmpty() ? "removed" : "replaced");
        closing.add(run.stopDiscovery());
        feed.vanished(run.lane, run.table.vanishAll(feed.now()), nanoTime.getAsLong());
      }
      if (run.discovery == null && !run.starting && run.state != State.INVALID) {
        start(run);
      }
    }
    return closing;
  }

  /**
   * A stranded thread returned: Configurations whose start was refused for too many stranded
   * threads start again now instead of at their next backoff.
   */
  private void onThreadFreed() {
    if (closed) {
      return;
    }
    try {
      loop.execute(
          () -> {
            for (Run run : runs.values()) {
              if (run.waitingForThreads && run.discovery == null && !run.starting && !closed) {
                start(run);
              }
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  private void start(Run run) {
    if (closed) {
      return;
    }
    run.cancelRestart();
    ConfigurationSpec spec = run.spec;
    Optional<DiscoveryHandler> handler = handlers.find(spec.handlerName());
    if (handler.isEmpty()) {
      status(
          run,
          State.HANDLER_MISSING,
          "discovery handler \""
              + spec.handlerName()
              + "\" is not installed (installed: "
              + handlers.names()
              + "); waiting for it");
      return;
    }
    Optional<String> reservedEnv = reservedEnvRefusal(spec);
    if (reservedEnv.isPresent()) {
      if (statuses.get(spec.name()) == null
          || !reservedEnv.get().equals(statuses.get(spec.name()).message())) {
        refused(Refusal.RESERVED_ENV);
      }
      status(run, State.INVALID, reservedEnv.get());
      return;
    }
    Map<String, String> props;
    try {
      props = properties.resolve(spec);
    } catch (PropertyResolver.UnresolvableException e) {
      status(run, State.INVALID, e.getMessage());
      return;
    }
    DiscoveryHandler h = handler.get();
    String name = spec.handlerName();
    DiscoveryContext context =
        new DiscoveryContext(
            spec.name(), node, spec.discoveryDetails(), props, handlerThreads.scheduler(h, name));
    long runId = ++run.runId;
    DeviceListener listener = new RunListener(run, runId);
    run.handler = h;
    run.starting = true;
    run.waitingForThreads = false;
    // On the handler's own thread; the discovery thread goes on and hears back when it is done.
    handlerThreads
        .call(
            h,
            name,
            spec.name(),
            "start",
            () -> {
              Validation validation = h.validate(context);
              for (String warning : validation.warnings()) {
                LOG.warn("configuration {}: {}", spec.name(), warning);
              }
              if (!validation.valid()) {
                throw new InvalidDetailsException(String.join("; ", validation.errors()));
              }
              return h.start(context, listener);
            },
            late -> closeLate(h, name, spec.name(), late))
        .whenComplete(
            (discovery, error) -> {
              try {
                loop.execute(() -> started(run, runId, h, discovery, error));
              } catch (java.util.concurrent.RejectedExecutionException e) {
                if (discovery != null) {
                  closeLate(h, name, spec.name(), discovery);
                }
              }
            });
  }

  /** A start handed to the handler's threads ended. Discovery thread. */
  private void started(
      Run run, long runId, DiscoveryHandler handler, Discovery discovery, Throwable error) {
    ConfigurationSpec spec = run.spec;
    if (closed || runs.get(spec.name()) != run || run.runId != runId) {
      // Stopped (or started again) meanwhile: this discovery is not wanted any more.
      if (discovery != null) {
        closeLate(handler, spec.handlerName(), spec.name(), discovery);
      }
      return;
    }
    run.starting = false;
    if (error == null && discovery == null) {
      error = new IllegalStateException("start returned no discovery");
    }
    if (error == null) {
      run.discovery = discovery;
      run.restartAttempts = 0;
      // A snapshot reported from within start() may have been processed already: its refusal
      // stands.
      if (run.refusal == null) {
        status(run, State.DISCOVERING, "discovering with handler " + spec.handlerName());
      }
      for (Listener l : listeners) {
        l.discoveryStarted(spec.handlerName(), spec.name());
      }
      return;
    }
    Throwable cause =
        error instanceof java.util.concurrent.CompletionException && error.getCause() != null
            ? error.getCause()
            : error;
    if (cause instanceof InvalidDetailsException) {
      handlerFailed(spec.handlerName(), HandlerFailure.INVALID_DETAILS);
      status(run, State.INVALID, "invalid discoveryDetails: " + cause.getMessage());
    } else if (cause instanceof HandlerThreads.CallFailure failure) {
      if (failure.refused()) {
        run.waitingForThreads = true;
        handlerFailed(spec.handlerName(), HandlerFailure.STRANDED_LIMIT);
      } else {
        handlerFailed(spec.handlerName(), HandlerFailure.START_TIMEOUT);
      }
      fail(run, failure.getMessage());
    } else {
      handlerFailed(spec.handlerName(), HandlerFailure.START_FAILED);
      fail(run, "handler " + spec.handlerName() + " failed to start: " + cause);
    }
  }

  /** Closes a discovery nobody wants any more, on the handler's threads. */
  private void closeLate(DiscoveryHandler handler, String name, String configuration, Discovery d) {
    handlerThreads
        .call(handler, name, configuration, "close", () -> closeQuietly(d, configuration), null)
        .exceptionally(e -> null);
  }

  private static Void closeQuietly(Discovery d, String configuration) {
    try {
      d.close();
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("configuration {}: handler close failed: {}", configuration, e.toString());
    }
    return null;
  }

  private void fail(Run run, String reason) {
    run.stopDiscovery();
    long delay =
        Math.min(
            MAX_RESTART.toMillis(), MIN_RESTART.toMillis() << Math.min(run.restartAttempts, 6));
    run.restartAttempts++;
    status(run, State.FAILED, reason + "; restarting in " + delay + " ms");
    run.restart =
        scheduler.schedule(
            () ->
                loop.execute(
                    () -> {
                      if (runs.get(run.spec.name()) == run
                          && run.discovery == null
                          && !run.starting) {
                        start(run);
                      }
                    }),
            delay,
            TimeUnit.MILLISECONDS);
  }

  private void status(Run run, State state, String message) {
    ConfigurationStatus previous = statuses.get(run.spec.name());
    if (previous == null || previous.state() != state || !previous.message().equals(message)) {
      if (state == State.DISCOVERING) {
        LOG.info("configuration {}: {}", run.spec.name(), message);
      } else {
        LOG.error("configuration {}: {}", run.spec.name(), message);
      }
    }
    run.state = state;
    ConfigurationStatus next = new ConfigurationStatus(state, message, run.table.size());
    if (!next.equals(statuses.put(run.spec.name(), next))) {
      notifyStatus();
    }
  }

  /** Why a Configuration's brokerProperties are refused on this agent, if they are. */
  private Optional<String> reservedEnvRefusal(ConfigurationSpec spec) {
    return rules.reservedEnvRefusal(spec);
  }

  private static void logBrokerPropertyDrops(ConfigurationSpec spec) {
    for (String drop : EnvContract.brokerPropertyDrops(spec.brokerProperties())) {
      LOG.warn("configuration {}: {}", spec.name(), drop);
    }
  }

  private void refused(Refusal refusal) {
    for (Listener l : listeners) {
      l.refused(refusal);
    }
  }

  private void handlerFailed(String handler, HandlerFailure failure) {
    for (Listener l : listeners) {
      l.handlerFailed(handler, failure);
    }
  }

  private void notifyStatus() {
    for (Runnable l : statusListeners) {
      try {
        l.run();
      } catch (RuntimeException e) {
        LOG.warn("status listener failed: {}", e.toString());
      }
    }
  }

  private void onSnapshot(Run run) {
    Pending pending = run.pending.getAndSet(null);
    if (pending == null || runs.get(run.spec.name()) != run || run.runId != pending.runId()) {
      return;
    }
    List<DiscoveredDevice> snapshot = pending.devices();
    run.lastSnapshot = snapshot;
    for (Listener l : listeners) {
      l.snapshot(run.spec.handlerName());
    }
    if (!run.resultsReported) {
      run.resultsReported = true;
      long took = nanoTime.getAsLong() - run.addedNanos;
      for (Listener l : listeners) {
        l.firstResults(run.spec.name(), took);
      }
    }
    DeviceTable.Outcome outcome = run.table.apply(snapshot, feed.now(), neighboursOf(run));
    for (String warning : outcome.warnings()) {
      LOG.warn("configuration {}: {}", run.spec.name(), warning);
    }
    feed.snapshot(run.lane, outcome.changes(), pending.reportedNanos());
    Optional<String> refusal = outcome.refusal();
    if (refusal.isPresent()) {
      if (!refusal.get().equals(run.refusal)) {
        if (outcome.classRefusal().isPresent()) {
          refused(Refusal.CLASS);
        }
        if (outcome.slotRefusal().isPresent()) {
          refused(Refusal.SLOTS);
        }
      }
      run.refusal = refusal.get();
      status(run, State.INVALID, refusal.get());
      return;
    }
    if (run.refusal != null) {
      run.refusal = null;
      status(run, State.DISCOVERING, "discovering with handler " + run.spec.handlerName());
      return;
    }
    status(
        run,
        run.state,
        statuses
            .getOrDefault(run.spec.name(), new ConfigurationStatus(run.state, "", 0))
            .message());
  }

  /** The other Configurations on this node, as {@code run}'s table sees them. */
  private DeviceTable.Neighbours neighboursOf(Run run) {
    long others = 0;
    for (Run r : runs.values()) {
      if (r != run) {
        others += r.table.slots();
      }
    }
    return new DeviceTable.Neighbours(
        others,
        () -> {
          // Which Configuration serves each class (the first seen, for a shared one).
          Map<String, String> owners = new HashMap<>();
          for (Run r : runs.values()) {
            if (r != run) {
              for (String cls : r.table.classes()) {
                owners.putIfAbsent(cls, r.spec.name());
              }
            }
          }
          return owners;
        });
  }

  /** One Configuration's discovery state; confined to the discovery thread except `pending`. */
  private final class Run {
    ConfigurationSpec spec;
    final DeviceTable table;
    final DeviceFeed.Lane lane;
    Discovery discovery;
    DiscoveryHandler handler;
    long runId;
    int restartAttempts;
    State state = State.DISCOVERING;
    ScheduledFuture<?> restart;
    final AtomicReference<Pending> pending = new AtomicReference<>();
    List<DiscoveredDevice> lastSnapshot = List.of();
    String refusal;
    long addedNanos;
    boolean resultsReported;
    // A start is with the handler (its result comes back to the discovery thread).
    boolean starting;
    // The last start was refused: the handler had too many stranded threads.
    boolean waitingForThreads;

    Run(ConfigurationSpec spec) {
      this.spec = spec;
      this.table = new DeviceTable(rules, spec);
      // A failed Instance write processes the last snapshot of this run again.
      this.lane =
          feed.lane(
              table,
              () -> {
                long id = runId;
                return () -> {
                  if (pending.compareAndSet(
                      null, new Pending(id, lastSnapshot, nanoTime.getAsLong()))) {
                    loop.execute(() -> onSnapshot(Run.this));
                  }
                };
              });
    }

    /**
     * Stops reporting at once and closes the discovery on the handler's threads (a start still with
     * the handler is closed when it returns). The future completes when the close returned, failed
     * or was abandoned.
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
      return handlerThreads
          .call(
              h, spec.handlerName(), spec.name(), "close", () -> closeQuietly(d, spec.name()), null)
          .exceptionally(
              e -> {
                LOG.warn(
                    "configuration {}: handler close did not finish: {}",
                    spec.name(),
                    e.getMessage());
                return null;
              });
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
  }

  /** A snapshot waiting for the discovery thread. */
  private record Pending(long runId, List<DiscoveredDevice> devices, long reportedNanos) {}

  /** The listener one run of a handler reports to; stale after the run stops. */
  private final class RunListener implements DeviceListener {
    private final Run run;
    private final long runId;

    RunListener(Run run, long runId) {
      this.run = run;
      this.runId = runId;
    }

    @Override
    public void devices(List<DiscoveredDevice> devices) {
      if (closed || devices == null) {
        return;
      }
      List<DiscoveredDevice> copy = new ArrayList<>(devices);
      // Coalesce: only the newest snapshot waiting to be processed matters; it keeps the time
      // of the oldest report it replaces (the changes waiting since then are in it).
      long now = nanoTime.getAsLong();
      Pending previous =
          run.pending.getAndUpdate(
              p ->
                  new Pending(
                      runId, copy, p != null && p.runId() == runId ? p.reportedNanos() : now));
      if (previous == null) {
        loop.execute(() -> onSnapshot(run));
      }
    }

    @Override
    public void failed(String reason, Throwable cause) {
      loop.execute(
          () -> {
            if (run.runId == runId && runs.get(run.spec.name()) == run) {
              handlerFailed(run.spec.handlerName(), HandlerFailure.REPORTED_FAILURE);
              fail(
                  run,
                  "handler "
                      + run.spec.handlerName()
                      + " reported failure: "
                      + reason
                      + (cause == null ? "" : " (" + cause + ")"));
            }
          });
    }
  }

  private static java.util.concurrent.ThreadFactory named(String name) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
