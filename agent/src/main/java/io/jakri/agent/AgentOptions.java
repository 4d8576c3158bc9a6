package io.jakri.agent;

import io.jakri.agent.cluster.WatchedNamespaces;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.reclaim.SlotReclaimer;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Everything the agent is configured with (from flags or env vars).
 *
 * @param config standalone mode's Configuration file or directory (empty in cluster mode)
 * @param reclaimGrace how long a slot this node holds must be unused by every container (per the
 *     kubelet's PodResources API) before it is freed
 * @param namespaces cluster mode: the namespaces whose Configurations the agent serves (every
 *     namespace by default); each Configuration's Instances go to its own namespace
 * @param tidyNode cluster mode: remove {@code akri.sh/...} keys this agent no longer serves from
 *     its Node's capacity and allocatable
 * @param metricsPort port of {@code /metrics}, {@code /healthz}, {@code /readyz}; negative: off, 0:
 *     any free port
 * @param safeguards what the operator lets Configurations do (class domains, reserved env names,
 *     the metrics address)
 * @param externalHandlers where Akri-protocol discovery handlers register; empty: not served
 */
public record AgentOptions(
    String nodeName,
    boolean standalone,
    Optional<Path> config,
    boolean emulateKubelet,
    Path devicePluginDir,
    Path podResourcesSocket,
    Path pluginsDir,
    Duration offlineGrace,
    Duration reclaimGrace,
    WatchedNamespaces namespaces,
    boolean tidyNode,
    int metricsPort,
    Safeguards safeguards,
    Optional<ExternalHandlers.Options> externalHandlers) {

  /** Options with the default reclaim grace and the cluster-mode settings at their defaults. */
  public AgentOptions(
      String nodeName,
      boolean standalone,
      Optional<Path> config,
      boolean emulateKubelet,
      Path devicePluginDir,
      Path podResourcesSocket,
      Path pluginsDir,
      Duration offlineGrace) {
    this(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        SlotReclaimer.DEFAULT_GRACE);
  }

  /** Options with the cluster-mode settings at their defaults. */
  public AgentOptions(
      String nodeName,
      boolean standalone,
      Optional<Path> config,
      boolean emulateKubelet,
      Path devicePluginDir,
      Path podResourcesSocket,
      Path pluginsDir,
      Duration offlineGrace,
      Duration reclaimGrace) {
    this(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        reclaimGrace,
        WatchedNamespaces.all(),
        true,
        -1,
        Safeguards.defaults(),
        Optional.empty());
  }

  /** A copy for cluster mode watching only {@code newNamespace}. */
  public AgentOptions inCluster(String newNamespace, boolean newTidyNode) {
    return inCluster(WatchedNamespaces.of(newNamespace), newTidyNode);
  }

  /** A copy for cluster mode watching {@code newNamespaces}. */
  public AgentOptions inCluster(WatchedNamespaces newNamespaces, boolean newTidyNode) {
    return new AgentOptions(
        nodeName,
        false,
        Optional.empty(),
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        reclaimGrace,
        newNamespaces,
        newTidyNode,
        metricsPort,
        safeguards,
        externalHandlers);
  }

  /** A copy with another reclaim grace. */
  public AgentOptions withReclaimGrace(Duration grace) {
    return new AgentOptions(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        grace,
        namespaces,
        tidyNode,
        metricsPort,
        safeguards,
        externalHandlers);
  }

  /** A copy serving metrics and health on {@code port} (0: any free port). */
  public AgentOptions withMetricsPort(int port) {
    return new AgentOptions(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        reclaimGrace,
        namespaces,
        tidyNode,
        port,
        safeguards,
        externalHandlers);
  }

  /** A copy with other safeguards. */
  public AgentOptions withSafeguards(Safeguards newSafeguards) {
    return new AgentOptions(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        reclaimGrace,
        namespaces,
        tidyNode,
        metricsPort,
        newSafeguards,
        externalHandlers);
  }

  /** A copy serving Akri's discovery-handler registration as {@code external} says. */
  public AgentOptions withExternalHandlers(Optional<ExternalHandlers.Options> external) {
    return new AgentOptions(
        nodeName,
        standalone,
        config,
        emulateKubelet,
        devicePluginDir,
        podResourcesSocket,
        pluginsDir,
        offlineGrace,
        reclaimGrace,
        namespaces,
        tidyNode,
        metricsPort,
        safeguards,
        external);
  }
}
