package io.jakri.agent;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.agent.allocation.NodeResources;
import io.jakri.agent.configuration.ConfigurationFiles;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.HandlerRegistry;
import io.jakri.agent.discovery.InstanceLifecycle;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
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
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The composition root of the node agent: builds every part from {@link AgentOptions}, wires them
 * through constructors, starts them in order and stops them in reverse. One Netty event loop group
 * serves every device-plugin server and client; one small scheduler serves timers and polling
 * handlers; no thread per device.
 */
public final class Agent implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Agent.class);

  /** The agent version plugins are checked against ({@code Plugin-Requires}). */
  public static final String VERSION = "0.1.0";

  private final AgentOptions options;
  private final EventLoopGroup group;
  private final ExecutorService grpcExecutor;
  private final ScheduledExecutorService scheduler;
  private final Optional<KubeletEmulator> emulator;
  private final DevicePluginManager plugins;
  private final InstanceStore store;
  private final NodeResources resources;
  private final PluginHandlerRegistry handlers;
  private final DiscoveryManager discovery;
  private final ConfigurationFiles configurationFiles;
  private final PodResourcesClient podResources;
  private final SlotReclaimer reclaimer;

  private Agent(AgentOptions options, PluginHandlerRegistry handlers) {
    this.options = options;
    this.group = new EpollEventLoopGroup(2, threads("jakri-netty"));
    this.grpcExecutor = Executors.newFixedThreadPool(8, threads("jakri-grpc"));
    ScheduledThreadPoolExecutor timers = new ScheduledThreadPoolExecutor(2, threads("jakri-timer"));
    timers.setRemoveOnCancelPolicy(true);
    this.scheduler = timers;
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
            options.devicePluginDir(), group, grpcExecutor, scheduler, Clock.systemUTC());
    this.store = new InMemoryInstanceStore();
    InstanceUpdates updates = new InstanceUpdates(store, new Random(), 20, Duration.ofMillis(20));
    this.resources = new NodeResources(options.nodeName(), updates, plugins);
    store.addListener(resources);
    this.handlers = handlers;
    this.discovery =
        new DiscoveryManager(
            options.nodeName(),
            handlers,
            PropertyResolver.literalOnly(),
            new InstanceLifecycle(options.nodeName(), updates),
            resources,
            scheduler,
            options.offlineGrace());
    this.configurationFiles =
        new ConfigurationFiles(
            options
                .config()
                .orElseThrow(() -> new IllegalArgumentException("--config is required")),
            scheduler,
            discovery::apply);
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
            scheduler,
            Clock.systemUTC(),
            options.reclaimGrace(),
            SlotReclaimer.periodFor(options.reclaimGrace()));
  }

  /** Builds and starts an agent in standalone mode. */
  public static Agent start(AgentOptions options) throws IOException {
    if (!options.standalone()) {
      throw new IllegalArgumentException("only standalone mode is available in this build");
    }
    PluginHandlerRegistry handlers = new PluginHandlerRegistry(options.pluginsDir(), VERSION);
    Agent agent = new Agent(options, handlers);
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
        "jakri agent {} starting on node {} (standalone, device plugins in {}, plugins from {})",
        VERSION,
        options.nodeName(),
        options.devicePluginDir(),
        options.pluginsDir());
    if (emulator.isPresent()) {
      emulator.get().start();
      LOG.info("kubelet emulator serving {}/kubelet.sock", options.devicePluginDir());
    }
    plugins.start();
    handlers.loadAll();
    handlers.watch(scheduler);
    configurationFiles.start();
    reclaimer.start();
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

  public HandlerRegistry handlers() {
    return handlers;
  }

  /** Plugin jars that could not be loaded, with reasons. */
  public java.util.List<PluginHandlerRegistry.LoadProblem> pluginProblems() {
    return handlers.problems();
  }

  public DiscoveryManager discovery() {
    return discovery;
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
    reclaimer.close();
    podResources.close();
    configurationFiles.close();
    discovery.close();
    plugins.close();
    emulator.ifPresent(KubeletEmulator::close);
    handlers.close();
    grpcExecutor.shutdown();
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

  private static ThreadFactory threads(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      return t;
    };
  }
}
