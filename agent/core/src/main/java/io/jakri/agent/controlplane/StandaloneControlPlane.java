package io.jakri.agent.controlplane;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.configuration.ConfigurationFiles;
import io.jakri.agent.configuration.ConfigurationSource;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.dra.DraOptions;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.InstanceListing;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.metrics.HealthServer;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Standalone mode: Configurations from YAML files, Instances in memory (listed on {@code
 * /instances}), {@code discoveryProperties} only as literal values, Events as log lines. Nothing of
 * its own to start or stop besides the files.
 */
public final class StandaloneControlPlane implements ControlPlane {

  private static final Logger LOG = LoggerFactory.getLogger(StandaloneControlPlane.class);

  private final Path config;
  private final ScheduledExecutorService scheduler;
  private final Events events;
  private final InstanceStore store = new InMemoryInstanceStore();
  private ConfigurationFiles files;

  /**
   * @param config the {@code --config} file or directory; required
   * @param events where operator-facing Events go (log lines)
   */
  public StandaloneControlPlane(
      Optional<Path> config, ScheduledExecutorService scheduler, Events events) {
    this.config = config.orElseThrow(() -> new IllegalArgumentException("--config is required"));
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.events = Objects.requireNonNull(events, "events");
  }

  @Override
  public String describe() {
    return "standalone";
  }

  @Override
  public InstanceStore store() {
    return store;
  }

  @Override
  public PropertyResolver properties() {
    return PropertyResolver.literalOnly();
  }

  @Override
  public Events events() {
    return events;
  }

  /** Standalone mode keeps no state outside the node that events would change. */
  @Override
  public void onReport(AgentReport report) {}

  @Override
  public String instanceNamespace(String instanceName) {
    return FALLBACK_NAMESPACE;
  }

  @Override
  public Optional<String> instanceUid(String instanceName) {
    return Optional.empty();
  }

  @Override
  public Optional<ApiCalls> apiCalls() {
    return Optional.empty();
  }

  @Override
  public void attach(NodeParts node) {
    files = new ConfigurationFiles(config, scheduler, node.discovery()::apply);
  }

  /** DRA needs the API server: off, said once. */
  @Override
  public Optional<DraParts> dra(DraOptions options, EventLoopGroup group, Executor grpcExecutor) {
    LOG.error(
        "--dra needs cluster mode (ResourceClaims and ResourceSlices live in the API server);"
            + " Dynamic Resource Allocation is off");
    return Optional.empty();
  }

  @Override
  public ConfigurationSource configurations() {
    if (files == null) {
      throw new IllegalStateException("not attached");
    }
    return files;
  }

  @Override
  public void start() {
    // Nothing besides the files, which the agent starts as the Configuration source.
  }

  /** No API server to ask: the Instances are listed here. */
  @Override
  public String addEndpoints(HealthServer server) {
    server.serveInstances(this::instancesYaml);
    return ", /instances";
  }

  private String instancesYaml() {
    try {
      return InstanceListing.yaml(store.list());
    } catch (StoreException e) {
      return "# the Instances cannot be listed: " + e.getMessage() + "\n";
    }
  }

  @Override
  public boolean synced() {
    return true;
  }

  @Override
  public void stop() {
    // The files are closed as the Configuration source.
  }

  @Override
  public void close() {
    // Nothing of its own: the store lives in memory.
  }
}
