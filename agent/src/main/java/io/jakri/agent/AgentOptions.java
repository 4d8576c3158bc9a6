package io.jakri.agent;

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
    Duration reclaimGrace) {

  /** Options with the default reclaim grace ({@link SlotReclaimer#DEFAULT_GRACE}). */
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
}
