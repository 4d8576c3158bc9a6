package io.jakri.agent.controlplane;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.jdkhttp.JdkHttpClientFactory;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.allocation.ClaimKeeper;
import io.jakri.agent.allocation.SlotClaims;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.cluster.ConfigurationStatusPublisher;
import io.jakri.agent.cluster.ConfigurationWatcher;
import io.jakri.agent.cluster.EventRecorder;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.cluster.KubernetesInstanceStore;
import io.jakri.agent.cluster.KubernetesPropertyResolver;
import io.jakri.agent.cluster.NodeLabels;
import io.jakri.agent.cluster.NodeTidier;
import io.jakri.agent.cluster.ObjectRef;
import io.jakri.agent.cluster.WatchedNamespaces;
import io.jakri.agent.configuration.ConfigurationSource;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.DiscoveryReport;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.dra.ClaimPreparer;
import io.jakri.agent.dra.ClaimReader;
import io.jakri.agent.dra.DraOptions;
import io.jakri.agent.dra.KubeletDraPlugin;
import io.jakri.agent.dra.ResourceSlicePublisher;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.metrics.HealthServer;
import io.jakri.agent.model.ConfigurationSpec;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Cluster mode: Configurations watched and Instances kept in the API server, {@code
 * discoveryProperties} read from Secrets and ConfigMaps, Kubernetes Events, this node's entry in
 * each Configuration's status. Besides those it keeps the cluster true to this node: it writes back
 * Instances others deleted or edited while their devices are still here (repair, claim keeper),
 * leaves Instances nobody here reports after a restart (leftover sweep) and removes retired {@code
 * akri.sh/} resources from the Node (tidier, node sweep). Events and node tidying talk to the API
 * server off the hot paths, one request at a time, on one thread of their own.
 */
public final class ClusterControlPlane implements ControlPlane {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterControlPlane.class);

  /** How often the API client itself retries a failed request before the agent's own backoff. */
  public static final int API_RETRIES = 2;

  /** The API client's first retry interval (it doubles). */
  public static final int API_RETRY_INTERVAL_MS = 100;

  private static final Duration LEFTOVER_SWEEP = Duration.ofMinutes(5);
  private static final Duration NODE_SWEEP = Duration.ofMinutes(1);

  /** How long Instance changes are gathered before the Node's labels are reconciled. */
  private static final Duration NODE_LABELS_COALESCE = Duration.ofMillis(500);

  private final KubernetesClient client;
  private final String nodeName;
  private final WatchedNamespaces namespaces;
  private final Duration offlineGrace;
  private final ScheduledExecutorService scheduler;
  private final ApiCalls calls = new ApiCalls();
  private final ConfigurationWatcher watcher;
  private final KubernetesInstanceStore store;
  private final KubernetesPropertyResolver properties;
  private final ExecutorService apiWrites;
  private final EventRecorder events;
  private final Optional<NodeTidier> tidier;
  private final Optional<NodeLabels> labels;

  // Set once by attach(), before start() lets anything call back.
  private DiscoveryManager discovery;
  private LocalDevices devices;
  private SlotClaims slots;
  private DevicePluginManager plugins;
  private ConfigurationStatusPublisher status;

  /**
   * @param client the API server; closed with the control plane
   * @param tidyNode whether retired {@code akri.sh/} resources are removed from the Node
   */
  public ClusterControlPlane(
      KubernetesClient client,
      String nodeName,
      WatchedNamespaces namespaces,
      boolean tidyNode,
      Duration offlineGrace,
      ScheduledExecutorService scheduler) {
    this(client, nodeName, namespaces, tidyNode, false, offlineGrace, scheduler);
  }

  /**
   * @param labelNode whether the Node is labelled {@code akri.sh/<configuration>=<Instances>}
   */
  public ClusterControlPlane(
      KubernetesClient client,
      String nodeName,
      WatchedNamespaces namespaces,
      boolean tidyNode,
      boolean labelNode,
      Duration offlineGrace,
      ScheduledExecutorService scheduler) {
    this.client = client;
    this.nodeName = nodeName;
    this.namespaces = namespaces;
    this.offlineGrace = offlineGrace;
    this.scheduler = scheduler;
    this.watcher =
        new ConfigurationWatcher(client, namespaces, scheduler, this::configurationsChanged);
    this.store =
        new KubernetesInstanceStore(
            client, namespaces, watcher::namespaceOf, nodeName, watcher::ownerOf, calls);
    this.properties = KubernetesPropertyResolver.asAkri(client);
    this.apiWrites =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "jakri-api-writes-1");
              t.setDaemon(true);
              return t;
            });
    this.events = new EventRecorder(client, nodeName, apiWrites, Clock.systemUTC());
    this.tidier = tidyNode ? Optional.of(new NodeTidier(client, nodeName)) : Optional.empty();
    this.labels =
        labelNode
            ? Optional.of(
                new NodeLabels(
                    client,
                    nodeName,
                    store::list,
                    store::synced,
                    scheduler,
                    NODE_LABELS_COALESCE,
                    NODE_SWEEP))
            : Optional.empty();
    labels.ifPresent(store::addListener);
  }

  /**
   * A client from the environment: the in-cluster service account, else the kubeconfig. The agent
   * retries on its own schedule (watches reconnect, writes back off); fabric8's default of ten
   * retries per request would hold an Allocate for tens of seconds while the API server is away.
   */
  public static KubernetesClient clientFromEnvironment(WatchedNamespaces namespaces) {
    Config config =
        new ConfigBuilder(Config.autoConfigure(null))
            .withRequestRetryBackoffLimit(API_RETRIES)
            .withRequestRetryBackoffInterval(API_RETRY_INTERVAL_MS)
            .withConnectionTimeout(5_000)
            .withRequestTimeout(10_000)
            .build();
    LOG.info("API server {} ({})", config.getMasterUrl(), namespaces.describe());
    // Named, not found on the class path: the tests' class path also holds Vert.x's factory.
    return new KubernetesClientBuilder()
        .withConfig(config)
        .withHttpClientFactory(new JdkHttpClientFactory())
        .build();
  }

  @Override
  public String describe() {
    return "cluster mode, " + namespaces.describe();
  }

  @Override
  public InstanceStore store() {
    return store;
  }

  @Override
  public PropertyResolver properties() {
    return properties;
  }

  @Override
  public Events events() {
    return events;
  }

  /**
   * A changed discovery status is published to this node's entry in the Configuration's status
   * (coalesced, on the scheduler); a retired resource is removed from the Node's capacity (when
   * tidying is on), off this thread.
   */
  @Override
  public void onReport(AgentReport report) {
    if (report instanceof AgentReport.Discovery d
        && d.report() instanceof DiscoveryReport.StatusChanged
        && status != null) {
      status.changed();
    }
    if (tidier.isPresent()
        && report instanceof AgentReport.DevicePlugin p
        && p.report() instanceof DevicePluginReport.Retired r) {
      NodeTidier t = tidier.get();
      apiWrites.execute(() -> tidy(t, r.resource()));
    }
  }

  /** Where the Instance was seen, else its Configuration's (from the name's prefix). */
  @Override
  public String instanceNamespace(String instanceName) {
    return store
        .namespaceOfInstance(instanceName)
        .or(() -> store.get(instanceName).flatMap(i -> watcher.namespaceOf(i.configurationName())))
        .orElse(FALLBACK_NAMESPACE);
  }

  @Override
  public Optional<String> instanceUid(String instanceName) {
    return store.uidOf(instanceName);
  }

  @Override
  public Optional<ApiCalls> apiCalls() {
    return Optional.of(calls);
  }

  @Override
  public void attach(NodeParts node) {
    this.discovery = node.discovery();
    this.devices = node.devices();
    this.slots = node.slots();
    this.plugins = node.plugins();
    this.status =
        new ConfigurationStatusPublisher(
            client,
            nodeName,
            watcher,
            discovery::statuses,
            (configuration, reason, message) ->
                events.warning(
                    ObjectRef.configuration(
                        configuration.namespace(), configuration.name(), configuration.uid()),
                    reason,
                    message),
            scheduler,
            Clock.systemUTC(),
            calls);
    // Akri-protocol handlers get Secret and ConfigMap (binaryData too) values as stored.
    node.externalHandlers()
        .ifPresent(
            e ->
                e.usePropertyBytes(
                    name -> {
                      ConfigurationWatcher.Known known = watcher.known().get(name);
                      if (known == null || known.spec().isEmpty()) {
                        return Optional.empty();
                      }
                      return Optional.of(properties.resolveBytes(known.spec().get()));
                    }));
    store.addListener(new Repair(node));
    // Other writers may delete, replace or edit Instances: this node's claims are written back.
    new ClaimKeeper(node.slots().claims(), node.updates(), apiWrites).start();
  }

  @Override
  public Optional<DraParts> dra(DraOptions options, EventLoopGroup group, Executor grpcExecutor) {
    ScheduledExecutorService timer = DraParts.newTimer();
    ResourceSlicePublisher slices =
        new ResourceSlicePublisher(
            client, nodeName, store, devices::all, timer, Duration.ofMillis(100));
    store.addListener(slices);
    ClaimPreparer preparer =
        new ClaimPreparer(nodeName, ClaimReader.of(client), devices, slots, store);
    KubeletDraPlugin plugin = new KubeletDraPlugin(options, preparer, group, grpcExecutor);
    return Optional.of(new DraParts(slices, plugin, timer));
  }

  @Override
  public ConfigurationSource configurations() {
    return watcher;
  }

  @Override
  public void start() {
    properties.onChange(discovery::rediscover);
    store.start();
    scheduleLeftoverSweep(offlineGrace);
    tidier.ifPresent(t -> scheduleNodeSweep(t, offlineGrace.plusSeconds(5), NODE_SWEEP));
    labels.ifPresent(NodeLabels::start);
  }

  @Override
  public String addEndpoints(HealthServer server) {
    return ""; // the Instances are in the API server
  }

  @Override
  public boolean synced() {
    return store.synced() && watcher.synced();
  }

  @Override
  public void stop() {
    labels.ifPresent(NodeLabels::close);
    if (status != null) {
      status.close();
    }
    properties.close();
  }

  @Override
  public void close() {
    store.close();
    apiWrites.shutdown();
    try {
      apiWrites.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    client.close();
  }

  /**
   * The watcher's complete list: property watches kept for these, discovery, this node's status.
   */
  private void configurationsChanged(List<ConfigurationSpec> specs) {
    properties.retain(specs.stream().map(ConfigurationSpec::name).toList());
    discovery.apply(specs);
    status.changed();
  }

  /**
   * After a restart, Instances may still list this node for devices it no longer sees (or of
   * Configurations deleted meanwhile). Once the Instances are listed and discovery had the offline
   * grace to find its devices again, this node leaves every Instance nobody here reports. Repeats
   * every {@link #LEFTOVER_SWEEP}.
   */
  private void scheduleLeftoverSweep(Duration after) {
    scheduler.schedule(
        () -> {
          if (!synced()) {
            scheduleLeftoverSweep(Duration.ofSeconds(5));
            return;
          }
          // Again later: a removal that failed while the API server was away is retried here.
          scheduleLeftoverSweep(LEFTOVER_SWEEP);
          List<String> mine =
              store.list().stream()
                  .filter(i -> i.nodes().contains(nodeName))
                  .map(Instance::name)
                  .toList();
          discovery.releaseUnknown(mine);
        },
        after.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Removes a retired resource from the Node; a failure is left to the periodic sweep. */
  private void tidy(NodeTidier tidier, String resource) {
    if (plugins.served().contains(resource)) {
      return; // served again meanwhile
    }
    try {
      tidier.removeResources(List.of(resource));
    } catch (NodeTidier.TidyException e) {
      LOG.warn("resource {}: {}; the next sweep retries", resource, e.getMessage());
    }
  }

  /**
   * Removes {@code akri.sh/...} keys this agent does not serve from its Node: once after start-up
   * (when discovery had the offline grace to serve what it finds), then every {@code period}. The
   * kubelet keeps a retired resource for minutes and then leaves it at 0 for good; this clears
   * both.
   */
  private void scheduleNodeSweep(NodeTidier tidier, Duration first, Duration period) {
    scheduler.scheduleWithFixedDelay(
        () ->
            apiWrites.execute(
                () -> {
                  if (!synced()) {
                    return;
                  }
                  Set<String> served = plugins.served();
                  try {
                    Set<String> removed = tidier.sweep(served::contains);
                    if (!removed.isEmpty()) {
                      LOG.info("node {}: removed stale resources {}", nodeName, removed);
                    }
                  } catch (NodeTidier.TidyException e) {
                    LOG.warn("node sweep failed, retrying later: {}", e.getMessage());
                  }
                }),
        first.toMillis(),
        period.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * Keeps this node's Instances true to what it discovers when someone else changes them: an
   * Instance deleted, or this node removed from it, while the device is still here is written
   * again.
   */
  private final class Repair implements InstanceStore.Listener {
    private final ControlPlane.NodeParts node;

    Repair(ControlPlane.NodeParts node) {
      this.node = node;
    }

    @Override
    public void changed(Instance instance) {
      if (!instance.nodes().contains(nodeName)
          && node.devices().get(instance.name()).filter(d -> d.online()).isPresent()) {
        node.discovery().republish(instance.name());
      }
    }

    @Override
    public void deleted(String name) {
      if (node.devices().get(name).filter(d -> d.online()).isPresent()) {
        node.discovery().republish(name);
      }
    }
  }
}
