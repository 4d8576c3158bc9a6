package io.jakri.agent.dra;

import java.nio.file.Path;

/**
 * Where the kubelet DRA plugin registers and serves.
 *
 * @param registryDir the kubelet's plugin-watcher directory; the registration socket is {@code
 *     <registryDir>/akri.sh-reg.sock}
 * @param pluginsDir the kubelet's plugins directory; the DRA socket is {@code
 *     <pluginsDir>/akri.sh/dra.sock}
 */
public record DraOptions(Path registryDir, Path pluginsDir) {

  public static final Path DEFAULT_REGISTRY_DIR = Path.of("/var/lib/kubelet/plugins_registry");
  public static final Path DEFAULT_PLUGINS_DIR = Path.of("/var/lib/kubelet/plugins");

  /** The registration socket the kubelet's plugin watcher finds. */
  public Path registrationSocket() {
    return registryDir.resolve(DraNames.DRIVER + "-reg.sock");
  }

  /** The socket serving the DRAPlugin services. */
  public Path draSocket() {
    return pluginsDir.resolve(DraNames.DRIVER).resolve("dra.sock");
  }
}
