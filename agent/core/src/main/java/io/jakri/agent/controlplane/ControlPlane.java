package io.jakri.agent.controlplane;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.allocation.SlotClaims;
import io.jakri.agent.cluster.ApiCalls;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.configuration.ConfigurationSource;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.dra.DraOptions;
import io.jakri.agent.events.AgentReport;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.metrics.HealthServer;
import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.Executor;

/**
 * Where the agent's Configurations come from and where its Instances and Events go: the API server
 * ({@link ClusterControlPlane}, cluster mode) or this node alone ({@link StandaloneControlPlane}:
 * Configurations from files, Instances in memory, Events as log lines). It gives the Instance
 * store, the property resolver, the Configuration source and the Events sink, and runs whatever
 * else the control plane needs. The composition root builds one, hands it the node's parts once
 * they exist ({@link #attach}) and then starts and stops it with the rest, without asking which one
 * it is.
 *
 * <p>Lifecycle: construct, {@link #attach}, {@link #start}, {@link #configurations()}{@code
 * .start()}; on the way down {@link #configurations()}{@code .close()}, {@link #stop} (before
 * discovery stops), {@link #close} (after everything that writes through the store stopped).
 */
public sealed interface ControlPlane permits StandaloneControlPlane, ClusterControlPlane {

  /** Where the agent's own objects without a namespace of their own go (Akri's default). */
  String FALLBACK_NAMESPACE = "default";

  /** The node's parts a control plane wires its own to; they exist before it is attached. */
  record NodeParts(
      DiscoveryManager discovery,
      LocalDevices devices,
      DevicePluginManager plugins,
      SlotClaims slots,
      InstanceUpdates updates,
      Optional<ExternalHandlers> externalHandlers) {}

  /** How the start-up line names the mode, e.g. {@code standalone}. */
  String describe();

  /** Where Instances live. */
  InstanceStore store();

  /** How {@code discoveryProperties} values are read. */
  PropertyResolver properties();

  /** Where operator-facing Events go: Kubernetes Events, or log lines. */
  Events events();

  /**
   * Acts on a report of the agent's stream, after metrics and Events saw it (cluster mode removes
   * retired resources from the Node). Any thread; must not block.
   */
  void onReport(AgentReport report);

  /** The namespace of an Instance for Events about it. */
  String instanceNamespace(String instanceName);

  /** An Instance's uid for Events about it, when known. */
  Optional<String> instanceUid(String instanceName);

  /** Counts of API requests made so far, when the control plane is an API server. */
  Optional<ApiCalls> apiCalls();

  /**
   * Wires the control plane to the node's parts: the Configuration source to discovery and whatever
   * else it keeps true. Called once, before {@link #start}.
   */
  void attach(NodeParts node);

  /**
   * Dynamic Resource Allocation's parts for {@code options}, when the control plane can serve them
   * (ResourceClaims and ResourceSlices live in the API server); called once, after {@link #attach}.
   */
  Optional<DraParts> dra(DraOptions options, EventLoopGroup group, Executor grpcExecutor);

  /** Where Configurations come from; available once {@link #attach attached}. */
  ConfigurationSource configurations();

  /** Starts the control plane's own parts (not the Configuration source). */
  void start() throws IOException;

  /**
   * Adds the control plane's own endpoints; returns how the start-up line lists them (may be
   * empty).
   */
  String addEndpoints(HealthServer server);

  /**
   * Whether the control plane's stores have listed what there is (always true without an API
   * server).
   */
  boolean synced();

  /** Stops what feeds discovery or reports on it; before discovery stops. Idempotent. */
  void stop();

  /** Releases the store and the control plane's threads; last. Idempotent. */
  void close();
}
