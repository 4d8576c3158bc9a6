package io.jakri.agent.discovery;

import io.jakri.agent.allocation.EnvContract;
import io.jakri.agent.allocation.NodeResources;
import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.configuration.ConfigurationSpec;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.logging.LogText;
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
 * Runs one discovery per Configuration and turns the handlers' snapshots into Instances.
 *
 * <p>All state lives on one discovery thread: Configuration changes, snapshots (coalesced: only the
 * newest pending snapshot of a run is processed), handler failures and grace timers are queued to
 * it. A device missing from a snapshot turns unhealthy at once and leaves after the offline grace
 * period unless it comes back. A handler that throws or reports failure is restarted with
 * exponential backoff; one that never returns from {@code start} is abandoned after a timeout.
 * Handler code ({@code validate}, {@code start}, {@code close}, the handler's timers) runs only on
 * the handler's own threads ({@link HandlerThreads}), never on the discovery thread or the agent's
 * scheduler: the discovery thread hands a start to them and goes on with other work, so a handler
 * that never returns holds up nothing but its own Configurations. Public methods may be called from
 * any thread.
 */
public final class DiscoveryManager implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  /** Most devices taken from one snapshot. */
  public static final int MAX_DEVICES = 10_000;

  /** Devices logged one by one per snapshot (discovered or vanished); the rest are counted. */
  private static final int LOGGED_PER_SNAPSHOT = 20;

  /** Dropped property names logged per Configuration; more are dropped without a line each. */
  private static final int MAX_DROPPED_LOGGED = 100;

  /**
   * Devices written to the store in one turn of a Configuration before the next Configuration with
   * devices waiting gets its turn (see {@link #publishTurn}).
   */
  static final int PUBLISH_BATCH = 8;

  private static final Duration MIN_RESTART = Duration.ofSeconds(1);
  private static final Duration MAX_RESTART = Duration.ofMinutes(1);

  private final String node;
  private final HandlerRegistry handlers;
  private final PropertyResolver properties;
  private final InstanceLifecycle lifecycle;
  private final NodeResources resources;
  private final ScheduledExecutorService scheduler;
  private final Duration offlineGrace;
  private final ExecutorService loop;
  private final HandlerThreads handlerThreads;
  private final Map<String, Run> runs = new HashMap<>();
  private final Map<String, ConfigurationStatus> statuses =
      new java.util.concurrent.ConcurrentHashMap<>();
  private final List<Runnable> statusListeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();
  private final LongSupplier nanoTime;
  private final ClassPolicy classPolicy;
  private final boolean allowReservedBrokerEnv;
  private final SlotLimits slotLimits;
  // Configurations with devices waiting to be written to the store, in turn order, and whether a
  // turn is queued on the discovery thread. Confined to the discovery thread.
  private final java.util.LinkedHashSet<Run> publishing = new java.util.LinkedHashSet<>();
  private boolean publishTurnQueued;
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

    /**
     * A device's state on this node changed because of a snapshot or the offline grace ending.
     *
     * @param reportedNanos the {@code nanoTime} reading taken when the handler reported the
     *     snapshot behind the change (the oldest one if several were coalesced)
     */
    default void deviceChanged(
        String handler, LocalDevice device, DeviceChange change, long reportedNanos) {}

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

  /** What happened to a device. */
  public enum DeviceChange {
    /** Reported for the first time (or again after it left). */
    APPEARED,
    /** Reported again while in its offline grace: healthy again. */
    RETURNED,
    /** Still reported, with other details (properties, mounts, class). */
    UPDATED,
    /** Missing from a snapshot: unhealthy now, removed after the offline grace. */
    VANISHED,
    /** Its offline grace ended: no longer advertised. */
    REMOVED
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

  public DiscoveryManager(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      InstanceLifecycle lifecycle,
      NodeResources resources,
      ScheduledExecutorService scheduler,
      Duration offlineGrace,
      LongSupplier nanoTime) {
    this(
        node,
        handlers,
        properties,
        lifecycle,
        resources,
        scheduler,
        offlineGrace,
        nanoTime,
        ClassPolicy.defaults(),
        false,
        SlotLimits.defaults());
  }

  /**
   * @param classPolicy which class resources a Configuration's devices may join
   * @param allowReservedBrokerEnv whether brokerProperties may set reserved env names
   * @param slotLimits the most slots per Configuration and in all
   */
  public DiscoveryManager(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      InstanceLifecycle lifecycle,
      NodeResources resources,
      ScheduledExecutorService scheduler,
      Duration offlineGrace,
      LongSupplier nanoTime,
      ClassPolicy classPolicy,
      boolean allowReservedBrokerEnv,
      SlotLimits slotLimits) {
    this(
        node,
        handlers,
        properties,
        lifecycle,
        resources,
        scheduler,
        offlineGrace,
        nanoTime,
        classPolicy,
        allowReservedBrokerEnv,
        slotLimits,
        HandlerLimits.defaults());
  }

  /**
   * @param scheduler the agent's scheduler, for the manager's own timers; handlers never get it
   * @param handlerLimits how long a handler call may take and how many threads a handler may strand
   */
  public DiscoveryManager(
      String node,
      HandlerRegistry handlers,
      PropertyResolver properties,
      InstanceLifecycle lifecycle,
      NodeResources resources,
      ScheduledExecutorService scheduler,
      Duration offlineGrace,
      LongSupplier nanoTime,
      ClassPolicy classPolicy,
      boolean allowReservedBrokerEnv,
      SlotLimits slotLimits,
      HandlerLimits handlerLimits) {
    this.slotLimits = slotLimits;
    this.classPolicy = classPolicy;
    this.allowReservedBrokerEnv = allowReservedBrokerEnv;
    this.node = node;
    this.nanoTime = nanoTime;
    this.handlers = handlers;
    this.properties = properties;
    this.lifecycle = lifecycle;
    this.resources = resources;
    this.scheduler = scheduler;
    this.offlineGrace = offlineGrace;
    this.loop = Executors.newSingleThreadExecutor(named("jakri-discovery"));
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

  /** Registers a listener told about snapshots, device changes and handler failures. */
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
            LocalDevice device = run.devices.get(instanceName);
            if (device != null && device.online()) {
              LOG.info(
                  "instance {}: changed elsewhere while its device is here; restoring",
                  instanceName);
              publishDevice(run, device);
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
            boolean known = runs.values().stream().anyMatch(r -> r.devices.containsKey(name));
            if (!known) {
              LOG.info(
                  "instance {}: not discovered on node {} since start; leaving it", name, node);
              try {
                lifecycle.gone(name);
              } catch (StoreException e) {
                LOG.error("instance {}: cannot remove this node from it: {}", name, e.getMessage());
              }
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
        for (String instance : new ArrayList<>(run.devices.keySet())) {
          removeDevice(run, instance);
        }
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
        if (reservedEnvRefusal(spec).isPresent()
            || (spec.capacity() > old.capacity()
                && (long) spec.capacity() * run.devices.size()
                    > Math.min(slotLimits.perConfiguration(), slotLimits.perAgent()))) {
          // Refused, or a capacity that the devices may no longer all have: start afresh, so the
          // devices are admitted again within the limits (none is kept half-applied).
          run.stopDiscovery();
          run.cancelTimers();
          for (String instance : new ArrayList<>(run.devices.keySet())) {
            removeDevice(run, instance);
          }
          start(run);
          continue;
        }
        // Existing devices take the new capacity and brokerProperties at once.
        for (Map.Entry<String, LocalDevice> e : new ArrayList<>(run.devices.entrySet())) {
          LocalDevice updated =
              new LocalDevice(e.getKey(), spec, e.getValue().device(), e.getValue().online());
          run.devices.put(e.getKey(), updated);
          publishDevice(run, updated);
        }
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
        markMissing(run, Set.of(), nanoTime.getAsLong());
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
    ConfigurationStatus next = new ConfigurationStatus(state, message, run.devices.size());
    if (!next.equals(statuses.put(run.spec.name(), next))) {
      notifyStatus();
    }
  }

  /** Why a Configuration's brokerProperties are refused on this agent, if they are. */
  private Optional<String> reservedEnvRefusal(ConfigurationSpec spec) {
    if (allowReservedBrokerEnv) {
      return Optional.empty();
    }
    List<String> reserved =
        spec.brokerProperties().keySet().stream()
            .filter(n -> EnvContract.validName(n) && EnvContract.reserved(n))
            .sorted()
            .toList();
    if (reserved.isEmpty()) {
      return Optional.empty();
    }
    return Optional.of(
        "spec.brokerProperties: reserved env "
            + (reserved.size() == 1 ? "name " : "names ")
            + LogText.quote(String.join(", ", reserved.subList(0, Math.min(10, reserved.size()))))
            + " would change how programs in every container given the device run; refused"
            + " (the operator may allow it with --allow-reserved-broker-env)");
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

  private void deviceChanged(Run run, LocalDevice device, DeviceChange change, long reported) {
    for (Listener l : listeners) {
      l.deviceChanged(run.spec.handlerName(), device, change, reported);
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
    Map<String, DiscoveredDevice> seen = new LinkedHashMap<>();
    int rejected = 0;
    for (DiscoveredDevice device : snapshot) {
      if (device == null || device.id() == null || device.id().isBlank()) {
        rejected++;
        continue;
      }
      if (seen.size() >= MAX_DEVICES) {
        rejected++;
        continue;
      }
      String name = InstanceNames.instanceName(run.spec.name(), device.id(), device.shared(), node);
      if (seen.putIfAbsent(name, bounded(device)) != null) {
        rejected++;
      }
    }
    String classRefusal = refuseClasses(run, seen);
    logDroppedProperties(run, seen.values());
    limitNewcomers(run, seen);
    String slotRefusal = limitSlots(run, seen);
    if (rejected > 0) {
      LOG.warn(
          "configuration {}: ignored {} reported devices (blank or duplicate ids, or over {})",
          run.spec.name(),
          rejected,
          MAX_DEVICES);
    }
    int discovered = 0;
    for (Map.Entry<String, DiscoveredDevice> e : seen.entrySet()) {
      LocalDevice current = run.devices.get(e.getKey());
      LocalDevice next = new LocalDevice(e.getKey(), run.spec, e.getValue(), true);
      if (current == null || !current.equals(next)) {
        deviceChanged(
            run,
            next,
            current == null
                ? DeviceChange.APPEARED
                : current.online() ? DeviceChange.UPDATED : DeviceChange.RETURNED,
            pending.reportedNanos());
        if (current == null) {
          if (++discovered <= LOGGED_PER_SNAPSHOT) {
            LOG.info(
                "configuration {}: device {} discovered as instance {}",
                run.spec.name(),
                e.getValue().id(),
                e.getKey());
          }
        } else if (!current.online()) {
          LOG.info("instance {}: device is back", e.getKey());
        }
        ScheduledFuture<?> timer = run.graceTimers.remove(e.getKey());
        if (timer != null) {
          timer.cancel(false);
        }
        run.devices.put(e.getKey(), next);
        queuePublish(run, e.getKey());
      }
    }
    if (discovered > LOGGED_PER_SNAPSHOT) {
      LOG.info(
          "configuration {}: {} more devices discovered (not logged one by one)",
          run.spec.name(),
          discovered - LOGGED_PER_SNAPSHOT);
    }
    markMissing(run, seen.keySet(), pending.reportedNanos());
    String refusal =
        classRefusal == null
            ? slotRefusal
            : slotRefusal == null ? classRefusal : classRefusal + "; " + slotRefusal;
    if (refusal != null) {
      if (!refusal.equals(run.refusal)) {
        if (classRefusal != null) {
          refused(Refusal.CLASS);
        }
        if (slotRefusal != null) {
          refused(Refusal.SLOTS);
        }
      }
      run.refusal = refusal;
      status(run, State.INVALID, refusal);
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

  /**
   * Leaves out of {@code seen} the devices whose class the Configuration may not use ({@link
   * ClassPolicy}); returns the refusals as one message (empty: none).
   */
  private String refuseClasses(Run run, Map<String, DiscoveredDevice> seen) {
    String own = run.spec.defaultClass();
    Map<String, Optional<String>> verdicts = new HashMap<>();
    Map<String, String> owners = null;
    int refusedDevices = 0;
    for (java.util.Iterator<DiscoveredDevice> it = seen.values().iterator(); it.hasNext(); ) {
      String cls = it.next().deviceClass().orElse(own);
      if (cls.equals(own)) {
        continue;
      }
      if (owners == null) {
        owners = classOwners(run);
      }
      Map<String, String> known = owners;
      Optional<String> verdict =
          verdicts.computeIfAbsent(
              cls,
              c ->
                  classPolicy.refusal(
                      run.spec.name(), c, known, run.spec.name().equals(known.get(c))));
      if (verdict.isPresent()) {
        it.remove();
        refusedDevices++;
      }
    }
    if (refusedDevices == 0) {
      return null;
    }
    List<String> reasons =
        verdicts.values().stream().flatMap(Optional::stream).sorted().limit(5).toList();
    return (refusedDevices
        + (refusedDevices == 1 ? " device" : " devices")
        + " refused: "
        + String.join("; ", reasons));
  }

  /** Which Configuration serves each class on this node (the first seen, for a shared one). */
  private Map<String, String> classOwners(Run asking) {
    Map<String, String> owners = new HashMap<>();
    for (Run r : runs.values()) {
      for (LocalDevice d : r.devices.values()) {
        String cls = d.classResource();
        if (r == asking) {
          owners.put(cls, r.spec.name());
        } else {
          owners.putIfAbsent(cls, r.spec.name());
        }
      }
    }
    return owners;
  }

  /**
   * Logs, once per Configuration and name, each device property or entry of a device's own env that
   * never reaches a container (DESIGN §5: invalid or reserved names, NUL characters, over-long
   * values).
   */
  private void logDroppedProperties(Run run, Collection<DiscoveredDevice> devices) {
    for (DiscoveredDevice device : devices) {
      for (Map.Entry<String, String> p : device.properties().entrySet()) {
        Optional<String> reason = EnvContract.dropReason(p.getKey(), p.getValue(), false);
        if (reason.isPresent()
            && run.droppedLogged.size() < MAX_DROPPED_LOGGED
            && run.droppedLogged.add(p.getKey())) {
          LOG.warn(
              "configuration {}: device property {} is not given to containers: {}",
              run.spec.name(),
              LogText.quote(p.getKey()),
              reason.get());
        }
      }
      for (Map.Entry<String, String> e : device.env().entrySet()) {
        Optional<String> reason = EnvContract.deviceEnvDropReason(e.getKey(), e.getValue());
        if (reason.isPresent()
            && run.droppedLogged.size() < MAX_DROPPED_LOGGED
            && run.droppedLogged.add(e.getKey())) {
          LOG.warn(
              "configuration {}: device env {} is not given to containers: {}",
              run.spec.name(),
              LogText.quote(e.getKey()),
              reason.get());
        }
      }
    }
  }

  /**
   * A device with more than {@link EnvContract#MAX_PROPERTIES} properties (or env entries of its
   * own) keeps only those a container could ever see (the same selection Allocate makes), so a
   * handler reporting millions of properties costs no more than one reporting the maximum.
   */
  private static DiscoveredDevice bounded(DiscoveredDevice device) {
    if (device.properties().size() <= EnvContract.MAX_PROPERTIES
        && device.env().size() <= EnvContract.MAX_PROPERTIES) {
      return device;
    }
    return new DiscoveredDevice(
        device.id(),
        device.properties().size() <= EnvContract.MAX_PROPERTIES
            ? device.properties()
            : EnvContract.mergedProperties(device.properties(), Map.of()),
        device.mounts(),
        device.deviceSpecs(),
        device.annotations(),
        device.deviceClass(),
        device.shared(),
        device.env().size() <= EnvContract.MAX_PROPERTIES
            ? device.env()
            : EnvContract.deviceEnv(device.env()));
  }

  /**
   * Keeps the devices tracked for one Configuration (seen now, or vanished and in their offline
   * grace) at most {@link #MAX_DEVICES}: newcomers that do not fit are left out of {@code seen}
   * until vanished devices leave at the end of their grace and make room. A handler that reports
   * ever-new ids (a flood) thus gets at most {@link #MAX_DEVICES} Instances per offline grace and
   * cannot make the agent create and retire device-plugin servers in a loop.
   */
  private void limitNewcomers(Run run, Map<String, DiscoveredDevice> seen) {
    long room = MAX_DEVICES - (long) run.devices.size();
    int left = 0;
    for (java.util.Iterator<String> it = seen.keySet().iterator(); it.hasNext(); ) {
      String name = it.next();
      if (run.devices.containsKey(name)) {
        continue;
      }
      if (room > 0) {
        room--;
      } else {
        it.remove();
        left++;
      }
    }
    if (left > 0) {
      LOG.warn(
          "configuration {}: {} devices tracked already (seen or within their offline grace);"
              + " {} new devices left out until vanished ones leave",
          run.spec.name(),
          run.devices.size(),
          left);
    }
  }

  /**
   * Leaves out of {@code seen} the new devices whose slots (capacity each) would take the
   * Configuration or the agent beyond {@link SlotLimits}; devices already tracked stay. Returns the
   * refusal, if any device was left out.
   */
  private String limitSlots(Run run, Map<String, DiscoveredDevice> seen) {
    long capacity = Math.max(1, run.spec.capacity());
    long others = 0;
    for (Run r : runs.values()) {
      if (r != run) {
        others += Math.max(1, (long) r.spec.capacity()) * r.devices.size();
      }
    }
    long byConfiguration = slotLimits.perConfiguration() / capacity - run.devices.size();
    long byAgent = (slotLimits.perAgent() - others) / capacity - run.devices.size();
    // The class resource lists every slot of the Configuration in one ListAndWatch message,
    // which the kubelet refuses beyond its message limit (and would never advertise).
    long byMessage =
        ConfigurationParser.devicesPerListAndWatch(run.spec.name(), (int) capacity)
            - run.devices.size();
    long room = Math.min(Math.min(byConfiguration, byAgent), byMessage);
    int left = 0;
    for (java.util.Iterator<String> it = seen.keySet().iterator(); it.hasNext(); ) {
      if (run.devices.containsKey(it.next())) {
        continue;
      }
      if (room > 0) {
        room--;
      } else {
        it.remove();
        left++;
      }
    }
    if (left == 0) {
      return null;
    }
    if (byMessage < Math.min(byConfiguration, byAgent)) {
      return left
          + (left == 1 ? " device" : " devices")
          + " of capacity "
          + capacity
          + " refused: the class resource's ListAndWatch message would be larger than the"
          + " kubelet accepts ("
          + ConfigurationParser.KUBELET_MAX_MESSAGE
          + " bytes; "
          + ConfigurationParser.devicesPerListAndWatch(run.spec.name(), (int) capacity)
          + " devices at most)";
    }
    boolean configurationBound = byConfiguration <= byAgent;
    return left
        + (left == 1 ? " device" : " devices")
        + " of capacity "
        + capacity
        + " refused: "
        + (configurationBound
            ? "more than "
                + slotLimits.perConfiguration()
                + " slots for this Configuration"
                + " (--max-slots-per-configuration)"
            : "more than "
                + slotLimits.perAgent()
                + " slots on this agent, "
                + others
                + " of them other Configurations' (--max-slots-per-agent)");
  }

  /** Devices not in {@code seen} turn unhealthy now and leave after the offline grace. */
  private void markMissing(Run run, Set<String> seen, long reportedNanos) {
    int vanished = 0;
    for (LocalDevice device : new ArrayList<>(run.devices.values())) {
      if (!seen.contains(device.instanceName()) && device.online()) {
        LocalDevice offline = device.withOnline(false);
        run.devices.put(device.instanceName(), offline);
        deviceChanged(run, offline, DeviceChange.VANISHED, reportedNanos);
        resources.upsertLocal(offline);
        if (++vanished <= LOGGED_PER_SNAPSHOT) {
          LOG.info(
              "instance {}: device {} vanished; unhealthy now, removed after {}",
              device.instanceName(),
              device.device().id(),
              io.jakri.logging.DurationText.of(offlineGrace));
        }
        String instance = device.instanceName();
        run.graceTimers.put(
            instance,
            scheduler.schedule(
                () -> loop.execute(() -> graceEnded(run, instance)),
                offlineGrace.toMillis(),
                TimeUnit.MILLISECONDS));
      }
    }
    if (vanished > LOGGED_PER_SNAPSHOT) {
      LOG.info(
          "configuration {}: {} more devices vanished (not logged one by one)",
          run.spec.name(),
          vanished - LOGGED_PER_SNAPSHOT);
    }
  }

  private void graceEnded(Run run, String instance) {
    run.graceTimers.remove(instance);
    LocalDevice device = run.devices.get(instance);
    if (runs.get(run.spec.name()) == run && device != null && !device.online()) {
      deviceChanged(run, device, DeviceChange.REMOVED, nanoTime.getAsLong());
      removeDevice(run, instance);
    }
  }

  /**
   * Queues a device of {@code run} to be written to the store (and advertised) in {@code run}'s
   * next turn. Discovery thread.
   */
  private void queuePublish(Run run, String instanceName) {
    run.toPublish.add(instanceName);
    publishing.add(run);
    queueTurn();
  }

  private void queueTurn() {
    if (!publishTurnQueued && !closed) {
      try {
        loop.execute(this::publishTurn);
        publishTurnQueued = true;
      } catch (java.util.concurrent.RejectedExecutionException e) {
        // closing
      }
    }
  }

  /**
   * One turn of the fair publishing queue: writes up to {@link #PUBLISH_BATCH} waiting devices of
   * the Configuration whose turn it is (each an Instance write, an API request in cluster mode),
   * then puts that Configuration at the back and queues the next turn behind whatever else waits
   * for the discovery thread. So Configurations with devices waiting take turns round-robin, and a
   * Configuration added while another one's 10,000 devices are being written waits for at most one
   * batch of each other Configuration, not for all of them. A device is written in the state it has
   * when its turn comes (skipped if it left meanwhile). Discovery thread.
   */
  private void publishTurn() {
    publishTurnQueued = false;
    java.util.Iterator<Run> turns = publishing.iterator();
    if (!turns.hasNext() || closed) {
      return;
    }
    Run run = turns.next();
    turns.remove();
    if (runs.get(run.spec.name()) != run) {
      run.toPublish.clear();
    } else {
      int written = 0;
      java.util.Iterator<String> names = run.toPublish.iterator();
      while (names.hasNext() && written < PUBLISH_BATCH && !closed) {
        String name = names.next();
        names.remove();
        LocalDevice device = run.devices.get(name);
        if (device != null) {
          publishDevice(run, device);
          written++;
        }
      }
      if (!run.toPublish.isEmpty()) {
        publishing.add(run); // to the back: the next Configuration goes first
      }
    }
    if (!publishing.isEmpty()) {
      queueTurn();
    }
  }

  private void publishDevice(Run run, LocalDevice device) {
    try {
      lifecycle.seen(device);
    } catch (StoreException e) {
      run.devices.remove(device.instanceName());
      long delay = run.scheduleRepublish();
      LOG.error(
          "instance {}: cannot record it in the store ({}); retrying in {} ms",
          device.instanceName(),
          e.getMessage(),
          delay);
      return;
    }
    run.publishFailures = 0;
    resources.upsertLocal(device);
  }

  private void removeDevice(Run run, String instance) {
    run.devices.remove(instance);
    try {
      lifecycle.gone(instance);
    } catch (StoreException e) {
      LOG.error("instance {}: cannot remove this node from it: {}", instance, e.getMessage());
    }
    resources.removeLocal(instance);
  }

  /** One Configuration's discovery state; confined to the discovery thread except `pending`. */
  private final class Run {
    ConfigurationSpec spec;
    Discovery discovery;
    DiscoveryHandler handler;
    long runId;
    int restartAttempts;
    State state = State.DISCOVERING;
    ScheduledFuture<?> restart;
    final Map<String, LocalDevice> devices = new LinkedHashMap<>();
    // Devices waiting for this Configuration's turn to be written to the store (by name).
    final java.util.LinkedHashSet<String> toPublish = new java.util.LinkedHashSet<>();
    final Map<String, ScheduledFuture<?>> graceTimers = new HashMap<>();
    final AtomicReference<Pending> pending = new AtomicReference<>();
    List<DiscoveredDevice> lastSnapshot = List.of();
    String refusal;
    final Set<String> droppedLogged = new java.util.HashSet<>();
    int publishFailures;
    long addedNanos;
    boolean resultsReported;
    ScheduledFuture<?> republish;
    // A start is with the handler (its result comes back to the discovery thread).
    boolean starting;
    // The last start was refused: the handler had too many stranded threads.
    boolean waitingForThreads;

    /**
     * Processes the last snapshot again after a backoff (1 s doubling to 1 min), so devices whose
     * Instance could not be written are retried even if the handler reports nothing new.
     */
    long scheduleRepublish() {
      long delay =
          Math.min(MAX_RESTART.toMillis(), MIN_RESTART.toMillis() << Math.min(publishFailures, 6));
      publishFailures++;
      if (republish == null || republish.isDone()) {
        long id = runId;
        republish =
            scheduler.schedule(
                () -> {
                  if (pending.compareAndSet(
                      null, new Pending(id, lastSnapshot, nanoTime.getAsLong()))) {
                    loop.execute(() -> onSnapshot(Run.this));
                  }
                },
                delay,
                TimeUnit.MILLISECONDS);
      }
      return delay;
    }

    Run(ConfigurationSpec spec) {
      this.spec = spec;
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
      if (republish != null) {
        republish.cancel(false);
        republish = null;
      }
      graceTimers.values().forEach(t -> t.cancel(false));
      graceTimers.clear();
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
