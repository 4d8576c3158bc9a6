package io.jakri.agent.metrics;

import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.deviceplugin.AllocateOutcome;
import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.DiscoveryReport;
import io.jakri.agent.discovery.HandlerFailure;
import io.jakri.agent.discovery.Refusal;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.ContainerPaths;
import io.jakri.agent.model.LocalDevice;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The agent's Prometheus metrics (one registry per agent, no static state). Counters and timers are
 * fed by the agent's report stream ({@link AgentReport}: device plugins, slot claims, discovery);
 * gauges read the agent's state when scraped, so nothing is polled between scrapes. Per-resource
 * tags are avoided on purpose: one agent serves thousands of Instances; tags take values from small
 * fixed sets (outcomes, reasons, change kinds) or the installed handler names. Names are listed in
 * the agent README. The methods taking reports are thread-safe and never block.
 */
public final class AgentMetrics implements java.util.function.Consumer<AgentReport> {

  /** Allocate latency buckets: a claim is one API write, more under conflicts or outages. */
  static final Duration[] ALLOCATE_BUCKETS = {
    Duration.ofMillis(1),
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10)
  };

  /**
   * Discovery-to-advertised buckets: an Instance write plus a coalesced publish (milliseconds), or
   * a new resource's server start and Register (hundreds of milliseconds), up to API outages.
   */
  static final Duration[] ADVERTISE_BUCKETS = {
    Duration.ofMillis(5),
    Duration.ofMillis(10),
    Duration.ofMillis(25),
    Duration.ofMillis(50),
    Duration.ofMillis(100),
    Duration.ofMillis(250),
    Duration.ofMillis(500),
    Duration.ofSeconds(1),
    Duration.ofMillis(2500),
    Duration.ofSeconds(5),
    Duration.ofSeconds(10),
    Duration.ofSeconds(30),
    Duration.ofSeconds(60)
  };

  /**
   * Akri's {@code akri_discovery_response_time} buckets (seconds), as Akri's agent defines them.
   */
  static final double[] AKRI_RESPONSE_TIME_BUCKETS = {
    0.25, 0.5, 1.0, 1.5, 2.0, 3.0, 5.0, 10.0, 60.0
  };

  /** At most this many resources wait for their change to be advertised (memory bound). */
  static final int MAX_WAITING_CHANGES = 100_000;

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final String node;
  private final InstanceStore store;
  private final Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> statuses;
  private final Counter registrations;
  private final Counter reRegistrations;
  private final Counter registrationFailures;
  private final Counter kubeletRestarts;
  private final Counter retired;
  private final MultiGauge instances;
  private final MultiGauge configurations;
  private final AdvertiseLatency advertiseLatency;
  private final Counter writeConflicts;
  private final Counter heldElsewhere;
  private final MultiGauge akriInstanceCount;
  private final Supplier<Map<String, Integer>> strandedThreads;
  private final MultiGauge handlerStranded;
  private final AtomicLong waitingForFiles = new AtomicLong();
  private final Map<Tags, AtomicLong> akriResponseResults = new ConcurrentHashMap<>();

  /**
   * @param served how many resources are served now
   * @param pluginLoadFailures how many plugin jars could not be loaded
   * @param pluginLoadersKeptOpen unloaded plugins whose class loader is kept open while their
   *     threads run
   * @param reclaimed slots freed by reclamation so far
   * @param nanoTime the monotonic clock discovery stamps its reports with ({@code
   *     System::nanoTime})
   * @param strandedThreads stranded threads (handler calls or scheduler tasks abandoned and still
   *     running) by handler name
   */
  public AgentMetrics(
      String node,
      InstanceStore store,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> statuses,
      LongSupplier served,
      LongSupplier pluginLoadFailures,
      LongSupplier pluginLoadersKeptOpen,
      LongSupplier reclaimed,
      Optional<ApiCalls> apiCalls,
      LongSupplier nanoTime,
      Supplier<Map<String, Integer>> strandedThreads) {
    this.node = node;
    this.strandedThreads = strandedThreads;
    this.store = store;
    this.statuses = statuses;
    new ClassLoaderMetrics().bindTo(registry);
    new JvmMemoryMetrics().bindTo(registry);
    new JvmGcMetrics().bindTo(registry);
    new JvmThreadMetrics().bindTo(registry);
    new ProcessorMetrics().bindTo(registry);
    new UptimeMetrics().bindTo(registry);
    new FileDescriptorMetrics().bindTo(registry);
    registrations =
        Counter.builder("jakri.registrations")
            .description("Resources registered with the kubelet (first time)")
            .register(registry);
    reRegistrations =
        Counter.builder("jakri.reregistrations")
            .description("Resources registered again (kubelet restart, socket lost)")
            .register(registry);
    registrationFailures =
        Counter.builder("jakri.registration.failures")
            .description("Register calls that failed (retried with backoff)")
            .register(registry);
    kubeletRestarts =
        Counter.builder("jakri.kubelet.restarts")
            .description("Kubelet restarts seen (kubelet.sock recreated)")
            .register(registry);
    retired =
        Counter.builder("jakri.resources.retired")
            .description("Resources no longer served")
            .register(registry);
    Gauge.builder("jakri.resources.served", served::getAsLong)
        .description("Device-plugin resources served now (Instance and class resources)")
        .register(registry);
    Gauge.builder("jakri.resources.waiting.open.files", waitingForFiles, AtomicLong::get)
        .description(
            "Device-plugin resources not served because the agent is within its reserve of open"
                + " files (see process_files_open_files and process_files_max_files)")
        .register(registry);
    Gauge.builder("jakri.plugin.load.failures", pluginLoadFailures::getAsLong)
        .description("Handler plugin jars that could not be loaded")
        .register(registry);
    Gauge.builder("jakri.plugin.class.loaders.kept.open", pluginLoadersKeptOpen::getAsLong)
        .description(
            "Unloaded handler plugins whose class loader is kept open because threads of theirs"
                + " still run")
        .register(registry);
    FunctionCounter.builder("jakri.reclaimed.slots", reclaimed, LongSupplier::getAsLong)
        .description("Slots freed because no container used them any more")
        .register(registry);
    apiCalls.ifPresent(
        calls -> {
          for (ApiCalls.Verb verb : ApiCalls.Verb.values()) {
            FunctionCounter.builder("jakri.api.requests", calls, c -> c.get(verb))
                .tag("verb", verb.name())
                .description("Requests to the Kubernetes API server by verb")
                .register(registry);
          }
        });
    instances =
        MultiGauge.builder("jakri.instances")
            .description("Instances per Configuration that list this node")
            .register(registry);
    configurations =
        MultiGauge.builder("jakri.configurations")
            .description("Configurations by discovery state on this node")
            .register(registry);
    // Every Allocate outcome exists from the start, so rate() and alerts see zeros, not gaps.
    allocateTimer(new AllocateOutcome.Granted());
    allocateTimer(new AllocateOutcome.Failed());
    for (AllocationException.Reason reason : AllocationException.Reason.values()) {
      allocateTimer(new AllocateOutcome.Refused(reason));
    }
    advertiseLatency =
        new AdvertiseLatency(
            Timer.builder("jakri.discovery.to.advertised")
                .description(
                    "From a handler reporting a device appearing, vanishing or returning to the"
                        + " kubelet being sent the resource's new ListAndWatch snapshot")
                .serviceLevelObjectives(ADVERTISE_BUCKETS)
                .register(registry),
            nanoTime,
            MAX_WAITING_CHANGES);
    writeConflicts = slotConflicts("write_conflict");
    // Both kinds exist from the start (zeros), as the Allocate outcomes do.
    for (ContainerPaths.Kind kind : ContainerPaths.Kind.values()) {
      refusedEntries(kind);
    }
    heldElsewhere = slotConflicts("held_elsewhere");
    handlerStranded =
        MultiGauge.builder("jakri.handler.stranded.threads")
            .description(
                "Threads of a discovery handler the agent gave up on: calls (start, close) or"
                    + " tasks on the handler's scheduler that ran past the call timeout and have"
                    + " not returned yet")
            .register(registry);
    // Akri's metric names, labels and meanings, so that Akri dashboards keep working.
    akriInstanceCount =
        MultiGauge.builder("akri.instance.count")
            .description("Akri Instance Count: Instances visible to this node by Configuration")
            .register(registry);
  }

  private DistributionSummary akriResponseTime(String configuration) {
    return DistributionSummary.builder("akri.discovery.response.time")
        .tag("configuration", configuration)
        .description(
            "Akri Discovery Response Time: seconds from the agent seeing a Configuration to its"
                + " first discovery results")
        .serviceLevelObjectives(AKRI_RESPONSE_TIME_BUCKETS)
        .register(registry);
  }

  private void akriResponseResult(String handler, String result) {
    Tags tags = Tags.of("discovery_handler_name", handler, "result", result);
    akriResponseResults
        .computeIfAbsent(
            tags,
            t -> {
              AtomicLong value = new AtomicLong();
              // A gauge holding a count: Prometheus' Java client would name a counter
              // akri_discovery_response_result_total, and Akri's name has no _total.
              Gauge.builder("akri.discovery.response.result", value, AtomicLong::get)
                  .tags(t)
                  .description(
                      "Akri Discovery Response Result: discovery starts by handler, Success or"
                          + " Fail (only increases)")
                  .register(registry);
              return value;
            })
        .incrementAndGet();
  }

  private Counter slotConflicts(String kind) {
    return Counter.builder("jakri.slot.conflicts")
        .tag("kind", kind)
        .description(
            "Slot claims that lost their Instance write to another writer (write_conflict, HTTP"
                + " 409, retried) or were refused because the slot is held elsewhere"
                + " (held_elsewhere)")
        .register(registry);
  }

  private Timer allocateTimer(AllocateOutcome outcome) {
    String result;
    String reason;
    if (outcome instanceof AllocateOutcome.Refused refused) {
      result = "refused";
      reason = refused.reason().name();
    } else if (outcome instanceof AllocateOutcome.Failed) {
      result = "failed";
      reason = "INTERNAL";
    } else {
      result = "granted";
      reason = "NONE";
    }
    return Timer.builder("jakri.allocate")
        .tags("outcome", result, "reason", reason)
        .description(
            "Allocate calls from the kubelet by outcome and refusal reason, and their time")
        .serviceLevelObjectives(ALLOCATE_BUCKETS)
        .register(registry);
  }

  /** The Prometheus text exposition, with the per-Configuration gauges refreshed first. */
  public synchronized String scrape() {
    Map<String, Integer> perConfiguration = new TreeMap<>();
    Map<Tags, Integer> akriCounts = new LinkedHashMap<>();
    try {
      for (Instance i : store.list()) {
        if (i.nodes().contains(node)) {
          perConfiguration.merge(i.configurationName(), 1, Integer::sum);
          akriCounts.merge(
              Tags.of(
                  "configuration", i.configurationName(), "is_shared", String.valueOf(i.shared())),
              1,
              Integer::sum);
        }
      }
    } catch (StoreException e) {
      // keep the last values
    }
    List<MultiGauge.Row<?>> akriRows = new ArrayList<>();
    akriCounts.forEach((t, n) -> akriRows.add(MultiGauge.Row.of(t, n)));
    akriInstanceCount.register(akriRows, true);
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    perConfiguration.forEach(
        (c, n) -> rows.add(MultiGauge.Row.of(Tags.of("configuration", c, "node", node), n)));
    instances.register(rows, true);
    Map<DiscoveryManager.State, Integer> byState = new EnumMap<>(DiscoveryManager.State.class);
    for (DiscoveryManager.State s : DiscoveryManager.State.values()) {
      byState.put(s, 0);
    }
    statuses.get().values().forEach(s -> byState.merge(s.state(), 1, Integer::sum));
    List<MultiGauge.Row<?>> stateRows = new ArrayList<>();
    byState.forEach((s, n) -> stateRows.add(MultiGauge.Row.of(Tags.of("state", s.name()), n)));
    configurations.register(stateRows, true);
    List<MultiGauge.Row<?>> strandedRows = new ArrayList<>();
    strandedThreads
        .get()
        .forEach((h, n) -> strandedRows.add(MultiGauge.Row.of(Tags.of("handler", h), n)));
    handlerStranded.register(strandedRows, true);
    return registry.scrape();
  }

  /** Counts and times what the agent's report stream carries. Any thread; never blocks. */
  @Override
  public void accept(AgentReport report) {
    if (report instanceof AgentReport.DevicePlugin p) {
      devicePlugin(p.report());
    } else if (report instanceof AgentReport.Claim c) {
      if (c.conflict() instanceof SlotConflict.LostWrites w) {
        writeConflicts.increment(w.conflicts());
      } else if (c.conflict() instanceof SlotConflict.HeldElsewhere) {
        heldElsewhere.increment();
      }
    } else if (report instanceof AgentReport.Discovery d) {
      discovery(d.report());
    } else if (report instanceof AgentReport.DeviceChanged d) {
      deviceChanged(d.change(), d.reportedNanos());
    }
    // Plugin load failures are a gauge over the registry's problems, read when scraped.
  }

  private void devicePlugin(DevicePluginReport report) {
    if (report instanceof DevicePluginReport.Registered r) {
      (r.again() ? reRegistrations : registrations).increment();
    } else if (report instanceof DevicePluginReport.RegistrationFailed) {
      registrationFailures.increment();
    } else if (report instanceof DevicePluginReport.KubeletRestarted k) {
      if (k.generation() > 1) {
        kubeletRestarts.increment();
      }
    } else if (report instanceof DevicePluginReport.Retired r) {
      retired.increment();
      advertiseLatency.retired(r.resource());
    } else if (report instanceof DevicePluginReport.Allocated a) {
      allocateTimer(a.outcome()).record(a.took());
    } else if (report instanceof DevicePluginReport.Advertised a) {
      advertiseLatency.advertised(a.resource(), a.changed());
    } else if (report instanceof DevicePluginReport.OpenFilesLow f) {
      waitingForFiles.set(f.waiting());
    }
  }

  // ---- discovery ----

  private void discovery(DiscoveryReport report) {
    if (report instanceof DiscoveryReport.Snapshot s) {
      snapshot(s.handler());
    } else if (report instanceof DiscoveryReport.HandlerFailed f) {
      handlerFailed(f.handler(), f.failure());
    } else if (report instanceof DiscoveryReport.Refused r) {
      refused(r.refusal());
    } else if (report instanceof DiscoveryReport.EntriesRefused e) {
      refusedEntries(e.kind()).increment(e.count());
    } else if (report instanceof DiscoveryReport.DiscoveryStarted s) {
      akriResponseResult(s.handler(), "Success");
    } else if (report instanceof DiscoveryReport.FirstResults f) {
      akriResponseTime(f.configuration()).record(f.nanos() / 1e9);
    }
    // A changed status is read by the configurations gauge when scraped.
  }

  private void snapshot(String handler) {
    Counter.builder("jakri.discovery.snapshots")
        .tag("handler", handler)
        .description("Device snapshots reported by discovery handlers and processed")
        .register(registry)
        .increment();
  }

  /**
   * A device's state on this node changed because of a snapshot or the offline grace ending
   * (changes of the agent's own bookkeeping, such as Instances written again, are not counted).
   *
   * @param reportedNanos the {@code nanoTime} reading taken when the handler reported the snapshot
   *     behind the change
   */
  private void deviceChanged(DeviceChange change, long reportedNanos) {
    if (!(change instanceof DeviceChange.OfDevice c)) {
      return;
    }
    LocalDevice device = c.device();
    switch (change.kind()) {
      case APPEARED, VANISHED, RETURNED -> {
        countChange(device, change.kind());
        advertiseLatency.changed(device.instanceResource(), reportedNanos);
        advertiseLatency.changed(device.classResource(), reportedNanos);
      }
      // Nothing new for the kubelet to be sent, or nothing a handler reported.
      case UPDATED, REMOVED -> countChange(device, change.kind());
      case REWRITTEN, WITHDRAWN, RELEASED -> {
        // The agent's own bookkeeping, not a change a handler reported.
      }
    }
  }

  private void countChange(LocalDevice device, DeviceChange.Kind kind) {
    Counter.builder("jakri.discovery.device.changes")
        .tags("handler", device.configuration().handlerName(), "change", kind.name())
        .description("Devices that appeared, were updated, vanished, returned or were removed")
        .register(registry)
        .increment();
  }

  private void handlerFailed(String handler, HandlerFailure failure) {
    switch (failure) {
      case START_FAILED, START_TIMEOUT, INVALID_DETAILS, STRANDED_LIMIT ->
          akriResponseResult(handler, "Fail");
      case REPORTED_FAILURE -> {
        // A running discovery failed; its restart counts as Success or Fail, as in Akri.
      }
    }
    Counter.builder("jakri.discovery.errors")
        .tags("handler", handler, "error", failure.name())
        .description("Discovery handler failures (each is retried with backoff)")
        .register(registry)
        .increment();
  }

  private Counter refusedEntries(ContainerPaths.Kind kind) {
    return Counter.builder("jakri.refused.container.entries")
        .tag("kind", kind.label())
        .description(
            "Mounts (mount) and device nodes (device) from handlers that no container may get"
                + " (absolute normalised paths, device nodes under /dev/, rwm permissions, no"
                + " system or kubelet directories); counted once per device, the device is served"
                + " without them")
        .register(registry);
  }

  private void refused(Refusal refusal) {
    Counter.builder("jakri.refusals")
        .tag("reason", refusal.name())
        .description(
            "Configurations (or some of their devices) newly refused by this agent's policies")
        .register(registry)
        .increment();
  }
}
