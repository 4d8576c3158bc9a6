package io.jakri.agent;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.allocation.LocalClaims;
import io.jakri.agent.allocation.NodeResources;
import io.jakri.agent.allocation.SlotClaims;
import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.cluster.ConfigurationWatcher;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.controlplane.ClusterControlPlane;
import io.jakri.agent.controlplane.ControlPlane;
import io.jakri.agent.controlplane.DraParts;
import io.jakri.agent.controlplane.StandaloneControlPlane;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.deviceplugin.ResourceServer.StaleSockets;
import io.jakri.agent.discovery.ClassPolicy;
import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.HandlerRegistry;
import io.jakri.agent.discovery.KubeletCheckpoint;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.discovery.SwitchedOffHandlers;
import io.jakri.agent.dra.KubeletDraPlugin;
import io.jakri.agent.dra.ResourceSlicePublisher;
import io.jakri.agent.events.AgentEvents;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.external.CombinedHandlerRegistry;
import io.jakri.agent.external.DirectoryInUseException;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.instance.InstanceLifecycle;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.metrics.AgentMetrics;
import io.jakri.agent.metrics.HealthServer;
import io.jakri.agent.reclaim.GrpcPodResourcesClient;
import io.jakri.agent.reclaim.PodResourcesClient;
import io.jakri.agent.reclaim.SlotReclaimer;
import java.io.IOException;
import java.time.Clock;
import java.time.Duration;
import java.util.Optional;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of the node agent: builds every part from {@link AgentOptions}, wires them
 * through constructors, starts them in order and stops them in reverse. One Netty event loop group
 * serves every device-plugin server and client; one small scheduler serves the agent's timers and
 * polling; no thread per device. Discovery handlers never run on it: each gets threads and a
 * scheduler of its own, abandoned when they block (see {@code HandlerThreads}). The device-plugin
 * manager (it publishes ListAndWatch updates on its timer) and the slot reclaimer (a blocking
 * PodResources call) each have a one-thread timer of their own, so neither waits behind, nor holds
 * up, the shared scheduler's timers and polling.
 */
public final class Agent implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /** The agent version plugins are checked against ({@code Plugin-Requires}). */
  public static final String VERSION = "0.1.0";

  /** How often the API client itself retries a failed request before the agent's own backoff. */
  public static final int API_RETRIES = ClusterControlPlane.API_RETRIES;

  /** The API client's first retry interval (it doubles). */
  public static final int API_RETRY_INTERVAL_MS = ClusterControlPlane.API_RETRY_INTERVAL_MS;

  private final AgentOptions options;
  private final AgentThreads threads = new AgentThreads();
  private final Optional<KubeletStandIn> kubelet;
  private final DevicePluginManager plugins;
  private final InstanceStore store;
  private final NodeResources resources;
  private final LocalDevices localDevices = new LocalDevices();
  private final SlotClaims slots;
  private final Optional<CdiSpecs> cdi;
  private final PluginHandlerRegistry handlers;
  private final Optional<ExternalHandlers> externalHandlers;
  private final HandlerRegistry allHandlers;
  private final DiscoveryManager discovery;
  private final ControlPlane controlPlane;
  private final PodResourcesClient podResources;
  private final SlotReclaimer reclaimer;
  private final AgentMetrics metrics;
  private final Optional<DraParts> dra;

  private Optional<HealthServer> health = Optional.empty();
  private Optional<ExecutorService> healthExecutor = Optional.empty();

  /**
   * The agent's one report stream, composed at the end of the constructor: metrics first, then
   * operator Events, then the control plane (cluster mode tidies retired resources off the Node),
   * then the caller's observer.
   */
  private final Consumer<AgentReport> reports;

  private Agent(
      AgentOptions options, Optional<KubernetesClient> client, Consumer<AgentReport> observer) {
    this.options = options;
    EventLoopGroup group = threads.group;
    ExecutorService grpcExecutor = threads.grpc;
    ScheduledExecutorService scheduler = threads.scheduler;
    this.kubelet =
        options.emulateKubelet()
            ? Optional.of(KubeletStandIn.forOptions(options, group))
            : Optional.empty();
    this.plugins =
        new DevicePluginManager(
            options.devicePluginDir(),
            group,
            grpcExecutor,
            threads.devicePluginTimer,
            Clock.systemUTC(),
            e -> publish(new AgentReport.DevicePlugin(e)));
    this.controlPlane = controlPlane(options, client, scheduler);
    this.store = controlPlane.store();
    InstanceUpdates updates = new InstanceUpdates(store, new Random(), 20, Duration.ofMillis(20));
    LocalClaims claims = new LocalClaims(options.nodeName());
    this.cdi = options.cdiDir().map(CdiSpecs::new);
    this.slots =
        new SlotClaims(options.nodeName(), updates, claims, c -> publish(new AgentReport.Claim(c)));
    this.resources = new NodeResources(plugins, localDevices, slots, cdi);
    localDevices.addListener(resources);
    store.addListener(resources);
    claims.addListener(resources::claimsChanged);
    this.handlers =
        new PluginHandlerRegistry(
            options.pluginsDir(),
            VERSION,
            p -> publish(new AgentReport.PluginLoadFailed(p)),
            options.safeguards().handlerLimits().callTimeout());
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
    HandlerRegistry installed =
        externalHandlers
            .<HandlerRegistry>map(e -> new CombinedHandlerRegistry(handlers, e))
            .orElse(handlers);
    Set<String> off = options.safeguards().handlerLimits().switchedOff();
    this.allHandlers = off.isEmpty() ? installed : new SwitchedOffHandlers(installed, off);
    if (!off.isEmpty()) {
      LOG.info(
          "discovery handlers switched off on this node (--disable-handlers): {}",
          String.join(", ", new java.util.TreeSet<>(off)));
    }
    this.discovery =
        new DiscoveryManager(
            options.nodeName(),
            allHandlers,
            controlPlane.properties(),
            new DeviceRouting(
                new InstanceLifecycle(options.nodeName(), updates, claims),
                localDevices,
                this::deviceChanged),
            scheduler,
            options.offlineGrace(),
            System::nanoTime,
            new ClassPolicy(
                options.safeguards().classDomains(),
                new KubeletCheckpoint(options.devicePluginDir())::foreignResources),
            options.safeguards().allowReservedBrokerEnv(),
            options.safeguards().containerPaths(),
            options.safeguards().slotLimits(),
            options.safeguards().handlerLimits(),
            e -> publish(new AgentReport.Discovery(e)));
    controlPlane.attach(
        new ControlPlane.NodeParts(
            discovery, localDevices, plugins, slots, updates, externalHandlers));
    Events events = controlPlane.events();
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
            threads.reclaimTimer,
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
            handlers::loadersKeptOpen,
            reclaimer::reclaimed,
            controlPlane.apiCalls(),
            System::nanoTime,
            discovery::strandedThreads);
    // Operator-facing Events: Kubernetes Events in cluster mode, log lines standalone.
    AgentEvents operatorEvents =
        new AgentEvents(
            events,
            options.nodeName(),
            controlPlane::instanceNamespace,
            controlPlane::instanceUid,
            Clock.systemUTC());
    this.reports = AgentReport.inOrder(metrics, operatorEvents, controlPlane::onReport, observer);
    this.dra = options.dra().flatMap(d -> controlPlane.dra(d, group, grpcExecutor));
  }

  /**
   * The last step of {@link DeviceRouting}: the report stream (metrics), then DRA's slices (both
   * are built after discovery, and told only once it runs).
   */
  private void deviceChanged(DeviceChange change, long reportedNanos) {
    publish(new AgentReport.DeviceChanged(change, reportedNanos));
    dra.ifPresent(d -> d.slices().deviceChanged(change));
  }

  /** Hands a report of one of the parts to the agent's report stream. Any thread. */
  private void publish(AgentReport report) {
    reports.accept(report);
  }

  /** The control plane, picked once: cluster mode when there is a client, else standalone. */
  private static ControlPlane controlPlane(
      AgentOptions options, Optional<KubernetesClient> client, ScheduledExecutorService scheduler) {
    return client
        .<ControlPlane>map(
            c ->
                new ClusterControlPlane(
                    c,
                    options.nodeName(),
                    options.namespaces(),
                    options.tidyNode(),
                    options.labelNode(),
                    options.offlineGrace(),
                    scheduler))
        .orElseGet(
            () -> new StandaloneControlPlane(options.config(), scheduler, Events.logging(LOG)));
  }

  /**
   * Builds and starts an agent: standalone when {@code options.standalone()}, else in cluster mode
   * with a client from the environment (in-cluster service account, else kubeconfig).
   */
  public static Agent start(AgentOptions options) throws IOException {
    return start(
        options,
        options.standalone()
            ? Optional.empty()
            : Optional.of(ClusterControlPlane.clientFromEnvironment(options.namespaces())));
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
   * Builds and starts an agent that also hands every report of its stream to {@code observer}
   * (after metrics, Events and the control plane; for tests and tools). The observer must not
   * block.
   */
  public static Agent start(
      AgentOptions options, Optional<KubernetesClient> client, Consumer<AgentReport> observer)
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
        controlPlane.describe(),
        options.devicePluginDir(),
        options.pluginsDir());
    if (kubelet.isPresent()) {
      kubelet.get().start();
      LOG.info("kubelet emulator serving {}/kubelet.sock", options.devicePluginDir());
    }
    // Sockets of an agent that was killed (no shutdown) would stay in the kubelet's directory.
    StaleSockets.remove(options.devicePluginDir());
    // Likewise specs of ours in the CDI directory, before discovery writes the current ones.
    cdi.ifPresent(CdiSpecs::start);
    plugins.start();
    handlers.loadAll();
    handlers.watch(threads.scheduler);
    if (externalHandlers.isPresent()) {
      try {
        externalHandlers.get().start();
      } catch (DirectoryInUseException e) {
        if (options.emulateKubelet()) {
          // Trying things out next to a real agent: refuse rather than run beside it half-working.
          throw e;
        }
        LOG.error(
            "Akri-protocol discovery handlers not served in {}: {}",
            externalHandlers.get().directory(),
            e.getMessage());
      } catch (IOException | RuntimeException e) {
        // The plugins and every other part keep working without Akri-protocol handlers.
        LOG.error(
            "Akri-protocol discovery handlers not served in {}: {}",
            externalHandlers.get().directory(),
            e.getMessage() == null ? e.toString() : e.getMessage());
      }
    }
    controlPlane.start();
    controlPlane.configurations().start();
    if (dra.isPresent()) {
      dra.get().start();
    }
    reclaimer.start();
    if (options.metricsPort() >= 0) {
      ExecutorService http = Executors.newSingleThreadExecutor(AgentThreads.named("jakri-http"));
      healthExecutor = Optional.of(http);
      HealthServer server =
          new HealthServer(
              new java.net.InetSocketAddress(
                  options.safeguards().metricsBindAddress(), options.metricsPort()),
              metrics,
              this::notReady,
              http);
      String extraEndpoints = controlPlane.addEndpoints(server);
      server.start();
      health = Optional.of(server);
      LOG.info(
          "metrics and health on {} port {} (/metrics, /healthz, /readyz{})",
          options.safeguards().metricsBindAddress(),
          server.port(),
          extraEndpoints);
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

  /** The Configuration watch (cluster mode). */
  public Optional<ConfigurationWatcher> configurations() {
    return Optional.of(controlPlane.configurations())
        .filter(ConfigurationWatcher.class::isInstance)
        .map(ConfigurationWatcher.class::cast);
  }

  /** Counts of API requests made so far (cluster mode). */
  public Optional<ApiCalls> apiCalls() {
    return controlPlane.apiCalls();
  }

  /** Whether the Instance and Configuration watches have listed once (cluster mode). */
  public boolean clusterSynced() {
    return controlPlane.synced();
  }

  /** The kubelet served in this process ({@code --emulate-kubelet}), if any. */
  public Optional<KubeletStandIn> kubeletStandIn() {
    return kubelet;
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

  /** The devices discovered on this node, by Instance name. */
  public LocalDevices localDevices() {
    return localDevices;
  }

  /** The slot claims behind Allocate and DRA. */
  public SlotClaims slots() {
    return slots;
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

  /**
   * Unloaded plugins whose class loader is kept open because threads of theirs still ran when they
   * were unloaded (closed once those threads end).
   */
  public int pluginLoadersKeptOpen() {
    return handlers.loadersKeptOpen();
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
    return dra.map(DraParts::slices);
  }

  /** The kubelet DRA plugin, when DRA is on. */
  public Optional<KubeletDraPlugin> draPlugin() {
    return dra.map(DraParts::plugin);
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
    long began = System.nanoTime();
    long cpuBefore = processCpuNanos();
    // CDI specs go first and beside the rest: thousands of files take seconds to remove, and a
    // SIGKILL at the end of the termination grace must not find them there (the next start removes
    // any that are, too). An Allocate answered meanwhile names no CDI device.
    Optional<Thread> cdiRemoval =
        cdi.map(
            specs -> {
              Thread t = new Thread(specs::close, "jakri-cdi-close");
              t.start();
              return t;
            });
    externalHandlers.ifPresent(ExternalHandlers::stopServing);
    dra.ifPresent(DraParts::close);
    health.ifPresent(HealthServer::close);
    healthExecutor.ifPresent(ExecutorService::shutdownNow);
    reclaimer.close();
    podResources.close();
    controlPlane.configurations().close();
    controlPlane.stop();
    discovery.close();
    externalHandlers.ifPresent(ExternalHandlers::close);
    plugins.close();
    cdiRemoval.ifPresent(Agent::join);
    kubelet.ifPresent(KubeletStandIn::close);
    handlers.close();
    controlPlane.close();
    threads.close();
    LOG.info(
        "jakri agent stopped in {} ms ({} ms CPU)",
        (System.nanoTime() - began) / 1_000_000,
        (processCpuNanos() - cpuBefore) / 1_000_000);
  }

  /** CPU time of the whole process so far (every thread), or 0 where the JVM does not say. */
  private static long processCpuNanos() {
    return java.lang.management.ManagementFactory.getOperatingSystemMXBean()
            instanceof com.sun.management.OperatingSystemMXBean os
        ? Math.max(0, os.getProcessCpuTime())
        : 0;
  }

  private static void join(Thread thread) {
    try {
      thread.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
