package io.jakri.agent;

import io.jakri.agent.cluster.WatchedNamespaces;
import io.jakri.agent.dra.DraOptions;
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
 * @param dra cluster mode: where the kubelet DRA plugin registers and serves, and ResourceSlices
 *     are published; empty: Dynamic Resource Allocation off
 * @param cdiDir where the CDI spec of every Instance served here is written (and Allocate names the
 *     CDI devices); empty: CDI off
 * @param labelNode whether, in cluster mode, the agent labels its Node {@code
 *     akri.sh/<configuration>=<number of its Instances on the node>} ({@code --label-node})
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
    Optional<ExternalHandlers.Options> externalHandlers,
    Optional<DraOptions> dra,
    Optional<Path> cdiDir,
    boolean labelNode) {

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
        Optional.empty(),
        Optional.empty(),
        Optional.empty(),
        false);
  }

  /** A copy for cluster mode watching only {@code newNamespace}. */
  public AgentOptions inCluster(String newNamespace, boolean newTidyNode) {
    return inCluster(WatchedNamespaces.of(newNamespace), newTidyNode);
  }

  /** A copy for cluster mode watching {@code newNamespaces}. */
  public AgentOptions inCluster(WatchedNamespaces newNamespaces, boolean newTidyNode) {
    Copy copy = new Copy(this);
    copy.standalone = false;
    copy.config = Optional.empty();
    copy.namespaces = newNamespaces;
    copy.tidyNode = newTidyNode;
    return copy.build();
  }

  /** A copy with another reclaim grace. */
  public AgentOptions withReclaimGrace(Duration grace) {
    Copy copy = new Copy(this);
    copy.reclaimGrace = grace;
    return copy.build();
  }

  /** A copy serving metrics and health on {@code port} (0: any free port). */
  public AgentOptions withMetricsPort(int port) {
    Copy copy = new Copy(this);
    copy.metricsPort = port;
    return copy.build();
  }

  /** A copy with other safeguards. */
  public AgentOptions withSafeguards(Safeguards newSafeguards) {
    Copy copy = new Copy(this);
    copy.safeguards = newSafeguards;
    return copy.build();
  }

  /** A copy serving Akri's discovery-handler registration as {@code external} says. */
  public AgentOptions withExternalHandlers(Optional<ExternalHandlers.Options> external) {
    Copy copy = new Copy(this);
    copy.externalHandlers = external;
    return copy.build();
  }

  /** A copy with Dynamic Resource Allocation on ({@code dra} present) or off. */
  public AgentOptions withDra(Optional<DraOptions> newDra) {
    Copy copy = new Copy(this);
    copy.dra = newDra;
    return copy.build();
  }

  /**
   * A copy that labels its Node {@code akri.sh/<configuration>=<Instances on it>} (cluster mode).
   */
  public AgentOptions withLabelNode(boolean label) {
    Copy copy = new Copy(this);
    copy.labelNode = label;
    return copy.build();
  }

  /** A copy writing CDI specs into {@code dir} (empty: CDI off). */
  public AgentOptions withCdi(Optional<Path> dir) {
    Copy copy = new Copy(this);
    copy.cdiDir = dir;
    return copy.build();
  }

  /** The components of a record being copied, so that each {@code with*} names only its change. */
  private static final class Copy {
    private final String nodeName;
    private boolean standalone;
    private Optional<Path> config;
    private final boolean emulateKubelet;
    private final Path devicePluginDir;
    private final Path podResourcesSocket;
    private final Path pluginsDir;
    private final Duration offlineGrace;
    private Duration reclaimGrace;
    private WatchedNamespaces namespaces;
    private boolean tidyNode;
    private int metricsPort;
    private Safeguards safeguards;
    private Optional<ExternalHandlers.Options> externalHandlers;
    private Optional<DraOptions> dra;
    private Optional<Path> cdiDir;
    private boolean labelNode;

    Copy(AgentOptions o) {
      nodeName = o.nodeName;
      standalone = o.standalone;
      config = o.config;
      emulateKubelet = o.emulateKubelet;
      devicePluginDir = o.devicePluginDir;
      podResourcesSocket = o.podResourcesSocket;
      pluginsDir = o.pluginsDir;
      offlineGrace = o.offlineGrace;
      reclaimGrace = o.reclaimGrace;
      namespaces = o.namespaces;
      tidyNode = o.tidyNode;
      metricsPort = o.metricsPort;
      safeguards = o.safeguards;
      externalHandlers = o.externalHandlers;
      dra = o.dra;
      cdiDir = o.cdiDir;
      labelNode = o.labelNode;
    }

    AgentOptions build() {
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
          externalHandlers,
          dra,
          cdiDir,
          labelNode);
    }
  }
}
