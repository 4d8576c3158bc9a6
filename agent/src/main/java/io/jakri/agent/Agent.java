package io.jakri.agent;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.agent.allocation.ClaimKeeper;
import io.jakri.agent.allocation.LocalClaims;
import io.jakri.agent.allocation.NodeResources;
import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.cluster.ConfigurationStatusPublisher;
import io.jakri.agent.cluster.ConfigurationWatcher;
import io.jakri.agent.cluster.EventRecorder;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.cluster.KubernetesInstanceStore;
import io.jakri.agent.cluster.KubernetesPropertyResolver;
import io.jakri.agent.cluster.NodeTidier;
import io.jakri.agent.cluster.ObjectRef;
import io.jakri.agent.configuration.ConfigurationFiles;
import io.jakri.agent.deviceplugin.DevicePluginEvent;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.deviceplugin.StaleSockets;
import io.jakri.agent.discovery.ClassPolicy;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.HandlerRegistry;
import io.jakri.agent.discovery.InstanceLifecycle;
import io.jakri.agent.discovery.KubeletCheckpoint;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.dra.ClaimPreparer;
import io.jakri.agent.dra.ClaimReader;
import io.jakri.agent.dra.KubeletDraPlugin;
import io.jakri.agent.dra.ResourceSlicePublisher;
import io.jakri.agent.events.AgentEvent;
import io.jakri.agent.events.AgentEvents;
import io.jakri.agent.external.CombinedHandlerRegistry;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.metrics.AgentMetrics;
import io.jakri.agent.metrics.HealthServer;
import io.jakri.agent.reclaim.GrpcPodResourcesClient;
import io.jakri.agent.reclaim.PodResourcesClient;
import io.jakri.agent.reclaim.SlotReclaimer;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of the node agent: builds every part from {@link AgentOptions}, wires them
 * through constructors, starts them in order and stops them in reverse. One Netty event loop group
 * serves every device-plugin server and client; one small scheduler serves timers and polling
 * handlers; no thread per device. The device-plugin manager (it publishes ListAndWatch updates on
 * its timer) and the slot reclaimer (a blocking PodResources call) each have a one-thread timer of
 * their own, so neither waits behind, nor holds up, the shared scheduler's handlers and polling.
 */
public final class Agent implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /** The agent version plugins are checked against ({@code Plugin-Requires}). */
  public static final String VERSION = "0.1.0";

  private static final Duration LEFTOVER_SWEEP = Duration.ofMinutes(5);

  /** How often the API client itself retries a failed request before the agent's own backoff. */
  public static final int API_RETRIES = 2;

  /** The API client's first retry interval (it doubles). */
  public static final int API_RETRY_INTERVAL_MS = 100;

  private final AgentOptions options;
  private final EventLoopGroup group;
  private final ExecutorService grpcExecutor;
  private final ScheduledExecutorService scheduler;
  private final ScheduledExecutorService devicePluginTimer;
  private final ScheduledExecutorService reclaimTimer;
  private final Optional<KubeletEmulator> emulator;
  private final DevicePluginManager plugins;
  private final InstanceStore store;
  private final NodeResources resources;
  private final Optional<CdiSpecs> cdi;
  private final PluginHandlerRegistry handlers;
  private final Optional<ExternalHandlers> externalHandlers;
  private final HandlerRegistry allHandlers;
  private final DiscoveryManager discovery;
  private final Optional<ConfigurationFiles> configurationFiles;
  private final Optional<Cluster> cluster;
  private final PodResourcesClient podResources;
  private final SlotReclaimer reclaimer;
  private final AgentMetrics metrics;
  private final Optional<KubernetesPropertyResolver> secrets;
  private final Optional<Dra> dra;

  /** Where the agent's own objects without a namespace of their own go (Akri's default). */
  private static final String AGENT_EVENTS_FALLBACK_NAMESPACE = "default";

  private Optional<HealthServer> health = Optional.empty();
  private Optional<ExecutorService> healthExecutor = Optional.empty();

  /** Dynamic Resource Allocation (cluster mode, when enabled): slices and the kubelet plugin. */
  private record Dra(
      ResourceSlicePublisher slices, KubeletDraPlugin plugin, ScheduledExecutorService timer) {}

  /** The parts only cluster mode has. */
  private record Cluster(
      KubernetesClient client,
      KubernetesInstanceStore store,
      ConfigurationWatcher watcher,
      ConfigurationStatusPublisher status,
      ApiCalls calls,
      Optional<NodeTidier> tidier,
      ExecutorService apiWrites) {}

  /**
   * The agent's one event stream, composed at the end of the constructor: metrics first, then
   * operator Events, then the cluster parts that act on events, then the caller's observer.
   */
  private final Consumer<AgentEvent> eventStream;

  private Agent(
      AgentOptions options, Optional<KubernetesClient> client, Consumer<AgentEvent> observer) {
    this.options = options;
    this.group = new EpollEventLoopGroup(2, threads("jakri-netty"));
    this.grpcExecutor = Executors.newFixedThreadPool(8, threads("jakri-grpc"));
    ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(2, threads("jakri-timer"));
    timers.setRemoveOnCancelPolicy(true);
    // On shutdown, drop timers still in the future (grace periods, sweeps) but run what is due.
    timers.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.scheduler = timers;
    this.devicePluginTimer = ownTimer("jakri-deviceplugin-timer");
    this.reclaimTimer = ownTimer("jakri-reclaim-timer");
    this.emulator =
        options.emulateKubelet()
            ? Optional.of(
                KubeletEmulator.builder(options.devicePluginDir())
                    .podResourcesSocket(options.podResourcesSocket())
                    .eventLoopGroup(group)
                    .build())
            : Optional.empty();
    this.plugins =
        new DevicePluginManager(
            options.devicePluginDir(),
            group,
            grpcExecutor,
            devicePluginTimer,
            Clock.systemUTC(),
            e -> publish(new AgentEvent.DevicePlugin(e)));
    ApiCalls calls = new ApiCalls();
    ConfigurationWatcher watcher =
        client
            .map(
                c ->
                    new ConfigurationWatcher(
                        c, options.namespaces(), scheduler, this::configurationsChanged))
            .orElse(null);
    KubernetesInstanceStore clusterStore =
        client
            .map(
                c ->
                    new KubernetesInstanceStore(
                        c,
                        options.namespaces(),
                        watcher::namespaceOf,
                        options.nodeName(),
                        watcher::ownerOf,
                        calls))
            .orElse(null);
    this.store = client.isPresent() ? clusterStore : new InMemoryInstanceStore();
    InstanceUpdates updates = new InstanceUpdates(store, new Random(), 20, Duration.ofMillis(20));
    LocalClaims claims = new LocalClaims(options.nodeName());
    this.cdi = options.cdiDir().map(CdiSpecs::new);
    this.resources =
        new NodeResources(
            options.nodeName(),
            updates,
            plugins,
            claims,
            cdi,
            c -> publish(new AgentEvent.Claim(c)));
    store.addListener(resources);
    this.handlers =
        new PluginHandlerRegistry(
            options.pluginsDir(), VERSION, p -> publish(new AgentEvent.PluginLoadFailed(p)));
    this.externalHandlers =
        options
            .externalHandlers()
            .map(
                o ->
                    new ExternalHandlers(
                        o.directory(),
                        group,
                        grpcExecutor,
                        scheduler,
                        o.settings(),
                        System::nanoTime));
    this.allHandlers =
        externalHandlers
            .<HandlerRegistry>map(e -> new CombinedHandlerRegistry(handlers, e))
            .orElse(handlers);
    Optional<KubernetesPropertyResolver> clusterProperties =
        client.map(KubernetesPropertyResolver::asAkri);
    this.secrets = clusterProperties;
    this.discovery =
        new DiscoveryManager(
            options.nodeName(),
            allHandlers,
            clusterProperties.<PropertyResolver>map(r -> r).orElse(PropertyResolver.literalOnly()),
            new InstanceLifecycle(options.nodeName(), updates, claims),
            resources,
            scheduler,
            options.offlineGrace(),
            System::nanoTime,
            new ClassPolicy(
                options.safeguards().classDomains(),
                new KubeletCheckpoint(options.devicePluginDir())::foreignResources),
            options.safeguards().allowReservedBrokerEnv(),
            options.safeguards().slotLimits());
    Events events = Events.logging(LOG);
    Consumer<AgentEvent> tidying = e -> {};
    if (client.isEmpty()) {
      this.configurationFiles =
          Optional.of(
              new ConfigurationFiles(
                  options
                      .config()
                      .orElseThrow(() -> new IllegalArgumentException("--config is required")),
                  scheduler,
                  discovery::apply));
      this.cluster = Optional.empty();
    } else {
      this.configurationFiles = Optional.empty();
      // Events and node tidying talk to the API server off the hot paths, one request at a time.
      ExecutorService apiWrites = Executors.newSingleThreadExecutor(threads("jakri-api-writes"));
      events = new EventRecorder(client.get(), options.nodeName(), apiWrites, Clock.systemUTC());
      Events recorder = events;
      ConfigurationStatusPublisher status =
          new ConfigurationStatusPublisher(
              client.get(),
              options.nodeName(),
              watcher,
              discovery::statuses,
              (configuration, reason, message) ->
                  recorder.warning(
                      ObjectRef.configuration(
                          configuration.namespace(), configuration.name(), configuration.uid()),
                      reason,
                      message),
              scheduler,
              Clock.systemUTC(),
              calls);
      Optional<NodeTidier> tidier =
          options.tidyNode()
              ? Optional.of(new NodeTidier(client.get(), options.nodeName()))
              : Optional.empty();
      this.cluster =
          Optional.of(
              new Cluster(client.get(), clusterStore, watcher, status, calls, tidier, apiWrites));
      if (tidier.isPresent()) {
        NodeTidier t = tidier.get();
        tidying =
            e -> {
              if (e instanceof AgentEvent.DevicePlugin p
                  && p.event() instanceof DevicePluginEvent.Retired r) {
                apiWrites.execute(() -> tidy(t, r.resource()));
              }
            };
      }
      discovery.addStatusListener(status::changed);
      // Akri-protocol handlers get Secret and ConfigMap (binaryData too) values as stored.
      externalHandlers.ifPresent(
          e ->
              e.usePropertyBytes(
                  name -> {
                    ConfigurationWatcher.Known known = watcher.known().get(name);
                    if (known == null || known.spec().isEmpty()) {
                      return Optional.empty();
                    }
                    return Optional.of(clusterProperties.get().resolveBytes(known.spec().get()));
                  }));
      store.addListener(new Repair(options.nodeName()));
      // Other writers may delete, replace or edit Instances: this node's claims are written back.
      new ClaimKeeper(claims, updates, apiWrites).start();
    }
    this.podResources =
        new GrpcPodResourcesClient(
            options.podResourcesSocket(),
            group,
            grpcExecutor,
            GrpcPodResourcesClient.DEFAULT_DEADLINE);
    this.reclaimer =
        new SlotReclaimer(
            options.nodeName(),
            podResources,
            updates,
            reclaimTimer,
            Clock.systemUTC(),
            options.reclaimGrace(),
            SlotReclaimer.periodFor(options.reclaimGrace()),
            claims,
            resources::usageOf);
    this.metrics =
        new AgentMetrics(
            options.nodeName(),
            store,
            discovery::statuses,
            () -> plugins.served().size(),
            () -> handlers.problems().size(),
            reclaimer::reclaimed,
            Optional.ofNullable(client.isPresent() ? calls : null),
            System::nanoTime);
    discovery.addListener(metrics);
    // Operator-facing Events: Kubernetes Events in cluster mode, log lines standalone.
    AgentEvents operatorEvents =
        new AgentEvents(
            events,
            options.nodeName(),
            instanceNamespace(clusterStore, watcher),
            client.isPresent() ? clusterStore::uidOf : name -> Optional.empty(),
            Clock.systemUTC());
    this.eventStream = AgentEvent.inOrder(metrics, operatorEvents, tidying, observer);
    this.dra = dra(options, client);
  }

  /** The DRA parts when enabled; they need the API server, so standalone mode says no. */
  private Optional<Dra> dra(AgentOptions options, Optional<KubernetesClient> client) {
    if (options.dra().isEmpty()) {
      return Optional.empty();
    }
    if (client.isEmpty()) {
      LOG.error(
          "--dra needs cluster mode (ResourceClaims and ResourceSlices live in the API server);"
              + " Dynamic Resource Allocation is off");
      return Optional.empty();
    }
    ScheduledExecutorService timer = ownTimer("jakri-dra-slices");
    ResourceSlicePublisher slices =
        new ResourceSlicePublisher(
            client.get(),
            options.nodeName(),
            store,
            resources::locals,
            timer,
            Duration.ofMillis(100));
    store.addListener(slices);
    discovery.addListener(slices);
    ClaimPreparer preparer =
        new ClaimPreparer(options.nodeName(), ClaimReader.of(client.get()), resources, store);
    KubeletDraPlugin plugin =
        new KubeletDraPlugin(options.dra().get(), preparer, group, grpcExecutor);
    return Optional.of(new Dra(slices, plugin, timer));
  }

  /** Hands an event of one of the parts to the agent's event stream. Any thread. */
  private void publish(AgentEvent event) {
    eventStream.accept(event);
  }

  /**
   * Keeps this node's Instances true to what it discovers when someone else changes them: an
   * Instance deleted, or this node removed from it, while the device is still here is written
   * again.
   */
  private final class Repair implements InstanceStore.Listener {
    private final String node;

    Repair(String node) {
      this.node = node;
    }

    @Override
    public void changed(io.jakri.agent.instance.Instance instance) {
      if (!instance.nodes().contains(node)
          && resources.local(instance.name()).filter(d -> d.online()).isPresent()) {
        discovery.republish(instance.name());
      }
    }

    @Override
    public void deleted(String name) {
      if (resources.local(name).filter(d -> d.online()).isPresent()) {
        discovery.republish(name);
      }
    }
  }

  /**
   * The namespace of an Instance for Events about it: where it was seen, else its Configuration's
   * (from the name's prefix), else {@code default}.
   */
  private static java.util.function.Function<String, String> instanceNamespace(
      KubernetesInstanceStore store, ConfigurationWatcher watcher) {
    if (store == null) {
      return name -> AGENT_EVENTS_FALLBACK_NAMESPACE;
    }
    return name ->
        store
            .namespaceOfInstance(name)
            .or(() -> store.get(name).flatMap(i -> watcher.namespaceOf(i.configurationName())))
            .orElse(AGENT_EVENTS_FALLBACK_NAMESPACE);
  }

  private void configurationsChanged(
      java.util.List<io.jakri.agent.configuration.ConfigurationSpec> specs) {
    secrets.ifPresent(
        s ->
            s.retain(
                specs.stream().map(io.jakri.agent.configuration.ConfigurationSpec::name).toList()));
    discovery.apply(specs);
    cluster.ifPresent(c -> c.status().changed());
  }

  /**
   * Builds and starts an agent: standalone when {@code options.standalone()}, else in cluster mode
   * with a client from the environment (in-cluster service account, else kubeconfig).
   */
  public static Agent start(AgentOptions options) throws IOException {
    if (options.standalone()) {
      return start(options, Optional.empty());
    }
    // In-cluster service account, else kubeconfig. The agent retries on its own schedule (watches
    // reconnect, writes back off); fabric8's default of ten retries per request would hold an
    // Allocate for tens of seconds while the API server is away.
    io.fabric8.kubernetes.client.Config config =
        new io.fabric8.kubernetes.client.ConfigBuilder(
                io.fabric8.kubernetes.client.Config.autoConfigure(null))
            .withRequestRetryBackoffLimit(API_RETRIES)
            .withRequestRetryBackoffInterval(API_RETRY_INTERVAL_MS)
            .withConnectionTimeout(5_000)
            .withRequestTimeout(10_000)
            .build();
    LOG.info("API server {} ({})", config.getMasterUrl(), options.namespaces().describe());
    return start(options, Optional.of(new KubernetesClientBuilder().withConfig(config).build()));
  }

  /**
   * Builds and starts an agent; cluster mode when {@code client} is present (the agent then closes
   * the client when it stops).
   */
  public static Agent start(AgentOptions options, Optional<KubernetesClient> client)
      throws IOException {
    return start(options, client, event -> {});
  }

  /**
   * Builds and starts an agent that also hands every event of its stream to {@code observer} (after
   * metrics and Events; for tests and tools). The observer must not block.
   */
  public static Agent start(
      AgentOptions options, Optional<KubernetesClient> client, Consumer<AgentEvent> observer)
      throws IOException {
    // gRPC logs through java.util.logging: into the agent's own log, transport noise at DEBUG.
    io.jakri.logging.JulBridge.install();
    Agent agent = new Agent(options, client, observer);
    try {
      agent.startParts();
    } catch (IOException | RuntimeException e) {
      agent.close();
      throw e;
    }
    return agent;
  }

  private void startParts() throws IOException {
    LOG.info(
        "jakri agent {} starting on node {} ({}, device plugins in {}, plugins from {})",
        VERSION,
        options.nodeName(),
        cluster.isPresent() ? "cluster mode, " + options.namespaces().describe() : "standalone",
        options.devicePluginDir(),
        options.pluginsDir());
    if (emulator.isPresent()) {
      emulator.get().start();
      LOG.info("kubelet emulator serving {}/kubelet.sock", options.devicePluginDir());
    }
    // Sockets of an agent that was killed (no shutdown) would stay in the kubelet's directory.
    StaleSockets.remove(options.devicePluginDir());
    // Likewise specs of ours in the CDI directory, before discovery writes the current ones.
    cdi.ifPresent(CdiSpecs::start);
    plugins.start();
    handlers.loadAll();
    handlers.watch(scheduler);
    if (externalHandlers.isPresent()) {
      try {
        externalHandlers.get().start();
      } catch (IOException | RuntimeException e) {
        // The plugins and every other part keep working without Akri-protocol handlers.
        LOG.error(
            "Akri-protocol discovery handlers not served in {}: {}",
            externalHandlers.get().directory(),
            e.getMessage() == null ? e.toString() : e.getMessage());
      }
    }
    if (configurationFiles.isPresent()) {
      configurationFiles.get().start();
    }
    if (cluster.isPresent()) {
      secrets.ifPresent(s -> s.onChange(discovery::rediscover));
      cluster.get().store().start();
      cluster.get().watcher().start();
      scheduleLeftoverSweep(options.offlineGrace());
      cluster
          .get()
          .tidier()
          .ifPresent(
              t ->
                  scheduleNodeSweep(
                      t, options.offlineGrace().plusSeconds(5), Duration.ofMinutes(1)));
    }
    if (dra.isPresent()) {
      dra.get().plugin().start();
      dra.get().slices().start();
    }
    reclaimer.start();
    if (options.metricsPort() >= 0) {
      ExecutorService http = Executors.newSingleThreadExecutor(threads("jakri-http"));
      healthExecutor = Optional.of(http);
      HealthServer server =
          new HealthServer(
              new java.net.InetSocketAddress(
                  options.safeguards().metricsBindAddress(), options.metricsPort()),
              metrics,
              this::notReady,
              http);
      if (cluster.isEmpty()) {
        // Standalone: no API server to ask, so the Instances are listed here.
        server.serveInstances(this::instancesYaml);
      }
      server.start();
      health = Optional.of(server);
      LOG.info(
          "metrics and health on {} port {} (/metrics, /healthz, /readyz{})",
          options.safeguards().metricsBindAddress(),
          server.port(),
          cluster.isEmpty() ? ", /instances" : "");
    }
  }

  private String instancesYaml() {
    try {
      return io.jakri.agent.instance.InstanceListing.yaml(instances().list());
    } catch (io.jakri.agent.instance.StoreException e) {
      return "# the Instances cannot be listed: " + e.getMessage() + "\n";
    }
  }

  /** Why the agent is not ready, if it is not: the kubelet is unreachable or watches not synced. */
  private Optional<String> notReady() {
    if (!plugins.kubeletReachable()) {
      return Optional.of("kubelet socket not found in " + options.devicePluginDir());
    }
    if (!clusterSynced()) {
      return Optional.of("Configurations and Instances not listed from the API server yet");
    }
    return Optional.empty();
  }

  /** The address the metrics and health endpoints listen on, when serving. */
  public Optional<java.net.InetSocketAddress> healthAddress() {
    return health.map(HealthServer::address);
  }

  /** The metrics registry's exposition and health endpoints' port, when serving. */
  public Optional<Integer> healthPort() {
    return health.map(HealthServer::port);
  }

  public AgentMetrics metrics() {
    return metrics;
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
          Cluster c = cluster.orElseThrow();
          if (!c.store().synced() || !c.watcher().synced()) {
            scheduleLeftoverSweep(Duration.ofSeconds(5));
            return;
          }
          // Again later: a removal that failed while the API server was away is retried here.
          scheduleLeftoverSweep(LEFTOVER_SWEEP);
          java.util.List<String> mine =
              c.store().list().stream()
                  .filter(i -> i.nodes().contains(options.nodeName()))
                  .map(io.jakri.agent.instance.Instance::name)
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
      tidier.removeResources(java.util.List.of(resource));
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
    Cluster c = cluster.orElseThrow();
    scheduler.scheduleWithFixedDelay(
        () ->
            c.apiWrites()
                .execute(
                    () -> {
                      if (!clusterSynced()) {
                        return;
                      }
                      java.util.Set<String> served = plugins.served();
                      try {
                        java.util.Set<String> removed = tidier.sweep(served::contains);
                        if (!removed.isEmpty()) {
                          LOG.info(
                              "node {}: removed stale resources {}", options.nodeName(), removed);
                        }
                      } catch (NodeTidier.TidyException e) {
                        LOG.warn("node sweep failed, retrying later: {}", e.getMessage());
                      }
                    }),
        first.toMillis(),
        period.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** The Configuration watch (cluster mode). */
  public Optional<ConfigurationWatcher> configurations() {
    return cluster.map(Cluster::watcher);
  }

  /** Counts of API requests made so far (cluster mode). */
  public Optional<ApiCalls> apiCalls() {
    return cluster.map(Cluster::calls);
  }

  /** Whether the Instance and Configuration watches have listed once (cluster mode). */
  public boolean clusterSynced() {
    return cluster.map(c -> c.store().synced() && c.watcher().synced()).orElse(true);
  }

  public Optional<KubeletEmulator> emulator() {
    return emulator;
  }

  public DevicePluginManager devicePlugins() {
    return plugins;
  }

  public InstanceStore instances() {
    return store;
  }

  public NodeResources resources() {
    return resources;
  }

  /** The CDI specs, when {@code --cdi} is on. */
  public Optional<CdiSpecs> cdiSpecs() {
    return cdi;
  }

  /** Every handler: the plugins' and the registered external ones (which win on equal names). */
  public HandlerRegistry handlers() {
    return allHandlers;
  }

  /** Akri-protocol discovery handlers, when served. */
  public Optional<ExternalHandlers> externalHandlers() {
    return externalHandlers;
  }

  /** Plugin jars that could not be loaded, with reasons. */
  public java.util.List<PluginHandlerRegistry.LoadProblem> pluginProblems() {
    return handlers.problems();
  }

  /** The handler names (and aliases) the loaded plugins answer to. */
  public java.util.Set<String> handlerNames() {
    return handlers.names();
  }

  public DiscoveryManager discovery() {
    return discovery;
  }

  /** The ResourceSlice publisher, when DRA is on. */
  public Optional<ResourceSlicePublisher> resourceSlices() {
    return dra.map(Dra::slices);
  }

  /** The kubelet DRA plugin, when DRA is on. */
  public Optional<KubeletDraPlugin> draPlugin() {
    return dra.map(Dra::plugin);
  }

  public SlotReclaimer reclaimer() {
    return reclaimer;
  }

  /**
   * Stops in reverse order: no new Configurations, discovery stopped, every device-plugin stream
   * ended and socket removed, emulator and threads stopped. Idempotent.
   */
  @Override
  public void close() {
    externalHandlers.ifPresent(ExternalHandlers::stopServing);
    dra.ifPresent(
        d -> {
          d.plugin().close();
          d.timer().shutdownNow();
          try {
            d.timer().awaitTermination(5, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          d.slices().close();
        });
    health.ifPresent(HealthServer::close);
    healthExecutor.ifPresent(ExecutorService::shutdownNow);
    reclaimer.close();
    podResources.close();
    configurationFiles.ifPresent(ConfigurationFiles::close);
    cluster.ifPresent(
        c -> {
          c.watcher().close();
          c.status().close();
        });
    secrets.ifPresent(KubernetesPropertyResolver::close);
    discovery.close();
    externalHandlers.ifPresent(ExternalHandlers::close);
    plugins.close();
    cdi.ifPresent(CdiSpecs::close);
    emulator.ifPresent(KubeletEmulator::close);
    handlers.close();
    cluster.ifPresent(
        c -> {
          c.store().close();
          c.apiWrites().shutdown();
          try {
            c.apiWrites().awaitTermination(5, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          c.client().close();
        });
    grpcExecutor.shutdown();
    reclaimTimer.shutdownNow();
    devicePluginTimer.shutdownNow();
    // Let queued clean-up (e.g. a handler's slow close handed to the scheduler) finish.
    scheduler.shutdown();
    try {
      if (!scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
        scheduler.shutdownNow();
      }
    } catch (InterruptedException e) {
      scheduler.shutdownNow();
      Thread.currentThread().interrupt();
    }
    try {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    LOG.info("jakri agent stopped");
  }

  /** A one-thread timer that drops its delayed tasks on shutdown. */
  private static ScheduledExecutorService ownTimer(String name) {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1, threads(name));
    timer.setRemoveOnCancelPolicy(true);
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    return timer;
  }

  private static ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
