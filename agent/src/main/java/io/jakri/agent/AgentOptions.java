package io.jakri.agent;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * Everything the agent is configured with (from flags or env vars).
 *
 * @param config standalone mode's Configuration file or directory (empty in cluster mode)
 */
public record AgentOptions(
    String nodeName,
    boolean standalone,
    Optional<Path> config,
    boolean emulateKubelet,
    Path devicePluginDir,
    Path podResourcesSocket,
    Path pluginsDir,
    Duration offlineGrace) {}
