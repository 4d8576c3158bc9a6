package io.jakri.agent.discovery;

import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.ContainerPaths;
import io.jakri.agent.model.EnvContract;
import io.jakri.handler.DiscoveryHandler;
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
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Runs one discovery per Configuration and hands what its snapshots change to one {@link
 * DeviceSink}.
 *
 * <p>Each Configuration's devices and the rules that admit them live in its {@link DeviceTable};
 * its handler's lifecycle in its {@link ConfigurationRun}: a start abandoned after a timeout, a
 * restart with exponential backoff when it throws or reports failure, snapshots coalesced (only the
 * newest pending snapshot of a run is processed). This class keeps the runs true to the desired
 * Configurations and the installed handlers; its {@link DeviceFeed} ends offline graces on a timer
 * and writes devices in fair turns between Configurations. All state lives on one discovery thread:
 * Configuration changes, snapshots, handler failures and timers are queued to it. Handler code
 * ({@code validate}, {@code start}, {@code close}, the handler's timers) runs only on the handler's
 * own threads ({@link HandlerThreads}), never on the discovery thread or the agent's scheduler: the
 * discovery thread hands a start to them and goes on with other work, so a handler that never
 * returns holds up nothing but its own Configurations. Public methods may be called from any
 * thread.
 *
 * <p>What the handlers do and every status change reach one sink as {@link DiscoveryReport} values
 * (metrics and the cluster mode's status publisher consume them through the agent's report stream).
 * They are all emitted on the discovery thread ({@code jakri-discovery-1}), in the order things
 * happen there.
 */
public final class DiscoveryManager implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  /** Most devices taken from one snapshot. */
  public static final int MAX_DEVICES = DeviceTable.MAX_DEVICES;

  private final String node;
  private final HandlerRegistry handlers;
  private final DeviceFeed feed;
  private final ExecutorService loop;
  private final HandlerThreads handlerThreads;
  private final Map<String, ConfigurationRun> runs = new HashMap<>();
  private final ConfigurationStatuses statuses;
  private final ConfigurationRun.Shared shared;
  private final LongSupplier nanoTime;
  private volatile boolean closed;

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
        ContainerPaths.DEFAULT,
        SlotLimits.defaults(),
        HandlerLimits.defaults(),
        report -> {});
  }

  /**
   * @param scheduler the agent's scheduler, for the manager's own timers; handlers never get it
   * @param classPolicy which class resources a Configuration's devices may join
   * @param allowReservedBrokerEnv whether brokerProperties may set reserved env names
   * @param containerPaths the rules a device's mounts and device nodes must meet to reach a
   *     container
   * @param slotLimits the most slots per Configuration and in all
   * @param handlerLimits how long a handler call may take and how many threads a handler may strand
   * @param reports where what the handlers do and every status change are reported ({@link
   *     DiscoveryReport}), on the discovery thread; must not block
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
      ContainerPaths containerPaths,
      SlotLimits slotLimits,
      HandlerLimits handlerLimits,
      Consumer<DiscoveryReport> reports) {
    DeviceTable.Rules rules =
        new DeviceTable.Rules(
            node, offlineGrace, classPolicy, slotLimits, allowReservedBrokerEnv, containerPaths);
    this.node = node;
    this.nanoTime = nanoTime;
    this.handlers = handlers;
    Consumer<DiscoveryReport> reported = reporting(reports);
    this.statuses =
        new ConfigurationStatuses(c -> reported.accept(new DiscoveryReport.StatusChanged(c)));
    this.loop = Executors.newSingleThreadExecutor(named("jakri-discovery"));
    this.feed = new DeviceFeed(sink, loop, scheduler, nanoTime, offlineGrace, () -> closed);
    this.handlerThreads = new HandlerThreads(scheduler, handlerLimits, this::onThreadFreed);
    this.shared =
        new ConfigurationRun.Shared(
            node,
            handlers,
            properties,
            rules,
            feed,
            new HandlerCalls(handlerThreads),
            scheduler,
            loop,
            statuses,
            reported,
            nanoTime,
            () -> closed,
            this::neighboursOf);
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
    return statuses.all();
  }

  /**
   * Stranded threads by handler name: calls into the handler and tasks on its scheduler that ran
   * past the call timeout and have not returned yet (see {@link HandlerLimits}).
   */
  public Map<String, Integer> strandedThreads() {
    return handlerThreads.stranded();
  }

  /**
   * Writes a locally seen device's Instance again (e.g. after someone deleted the Instance or
   * removed this node from it while the device is still here). No-op unless the device is online on
   * this node. Returns at once.
   */
  public void republish(String instanceName) {
    loop.execute(
        () -> {
          for (ConfigurationRun run : runs.values()) {
            run.republish(instanceName);
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
          ConfigurationRun run = runs.get(name);
          if (run == null || closed) {
            return;
          }
          run.stopDiscovery();
          run.resetBackoff();
          run.start();
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
                    for (ConfigurationRun run : runs.values()) {
                      run.cancelTimers();
                      all.add(run.stopDiscovery());
                      run.retire();
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
        runs.remove(name).remove();
        statuses.remove(name);
        LOG.info("configuration {}: removed; discovery stopped", name);
        // Classes it served may be free for Configurations refused them.
        for (ConfigurationRun other : runs.values()) {
          if (other.refusing()) {
            other.reprocess();
          }
        }
      }
    }
    for (ConfigurationSpec spec : wanted.values()) {
      ConfigurationRun run = runs.get(spec.name());
      if (run == null) {
        run = new ConfigurationRun(spec, shared);
        runs.put(spec.name(), run);
        LOG.info("configuration {}: added (handler {})", spec.name(), spec.handlerName());
        logBrokerPropertyDrops(spec);
        run.start();
      } else if (!run.spec().equals(spec)) {
        LOG.info("configuration {}: changed", spec.name());
        if (!run.spec().brokerProperties().equals(spec.brokerProperties())) {
          logBrokerPropertyDrops(spec);
        }
        run.respecify(spec);
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
    for (ConfigurationRun run : runs.values()) {
      Optional<DiscoveryHandler> now = handlers.find(run.spec().handlerName());
      if (run.active() && (now.isEmpty() || now.get() != run.handler())) {
        LOG.info(
            "configuration {}: handler {} was {}; stopping its discovery",
            run.spec().name(),
            run.spec().handlerName(),
            now.isEmpty() ? "removed" : "replaced");
        closing.add(run.handlerGone());
      }
      if (!run.active() && run.state() != State.INVALID) {
        run.start();
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
            for (ConfigurationRun run : runs.values()) {
              if (run.waitingForThreads() && !run.active() && !closed) {
                run.start();
              }
            }
          });
    } catch (java.util.concurrent.RejectedExecutionException e) {
      // closing
    }
  }

  private static void logBrokerPropertyDrops(ConfigurationSpec spec) {
    for (String drop : EnvContract.brokerPropertyDrops(spec.brokerProperties())) {
      LOG.warn("configuration {}: {}", spec.name(), drop);
    }
  }

  /** {@code reports}, with a failure of its own logged and dropped (discovery goes on). */
  private static Consumer<DiscoveryReport> reporting(Consumer<DiscoveryReport> reports) {
    return report -> {
      try {
        reports.accept(report);
      } catch (RuntimeException e) {
        LOG.warn("discovery report sink failed on {}: {}", report, e.toString());
      }
    };
  }

  /** The other Configurations on this node, as {@code run}'s table sees them. */
  private DeviceTable.Neighbours neighboursOf(ConfigurationRun run) {
    long others = 0;
    for (ConfigurationRun r : runs.values()) {
      if (r != run) {
        others += r.table.slots();
      }
    }
    return new DeviceTable.Neighbours(
        others,
        () -> {
          // Which Configuration serves each class (the first seen, for a shared one).
          Map<String, String> owners = new HashMap<>();
          for (ConfigurationRun r : runs.values()) {
            if (r != run) {
              for (String cls : r.table.classes()) {
                owners.putIfAbsent(cls, r.spec().name());
              }
            }
          }
          return owners;
        });
  }

  private static java.util.concurrent.ThreadFactory named(String name) {
    java.util.concurrent.atomic.AtomicInteger n = new java.util.concurrent.atomic.AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      // Not the creator's: a handler's thread may be the first to hand work to the loop.
      t.setContextClassLoader(DiscoveryManager.class.getClassLoader());
      return t;
    };
  }
}
