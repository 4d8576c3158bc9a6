package io.jakri.agent.metrics;

import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.binder.jvm.ClassLoaderMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.FileDescriptorMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.LongSupplier;
import java.util.function.Supplier;

/**
 * The agent's Prometheus metrics (one registry per agent, no static state). Counters are fed by the
 * device-plugin manager's listener; gauges read the agent's state when scraped, so nothing is
 * polled between scrapes. Per-resource tags are avoided on purpose: one agent serves thousands of
 * Instances. Names are listed in the agent README.
 */
public final class AgentMetrics implements DevicePluginManager.Listener {

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

  /**
   * @param served how many resources are served now
   * @param pluginLoadFailures how many plugin jars could not be loaded
   * @param reclaimed slots freed by reclamation so far
   */
  public AgentMetrics(
      String node,
      InstanceStore store,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> statuses,
      LongSupplier served,
      LongSupplier pluginLoadFailures,
      LongSupplier reclaimed,
      Optional<ApiCalls> apiCalls) {
    this.node = node;
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
    Gauge.builder("jakri.plugin.load.failures", pluginLoadFailures::getAsLong)
        .description("Handler plugin jars that could not be loaded")
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
  }

  /** The Prometheus text exposition, with the per-Configuration gauges refreshed first. */
  public synchronized String scrape() {
    Map<String, Integer> perConfiguration = new TreeMap<>();
    try {
      for (Instance i : store.list()) {
        if (i.nodes().contains(node)) {
          perConfiguration.merge(i.configurationName(), 1, Integer::sum);
        }
      }
    } catch (StoreException e) {
      // keep the last values
    }
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
    return registry.scrape();
  }

  @Override
  public void registered(String resource, String endpoint, boolean again) {
    (again ? reRegistrations : registrations).increment();
  }

  @Override
  public void registrationFailed(String resource, String reason) {
    registrationFailures.increment();
  }

  @Override
  public void kubeletRestarted(long generation) {
    if (generation > 1) {
      kubeletRestarts.increment();
    }
  }

  @Override
  public void retired(String resource) {
    retired.increment();
  }
}
