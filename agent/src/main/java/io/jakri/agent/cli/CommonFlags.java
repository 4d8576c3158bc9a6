package io.jakri.agent.cli;

import io.jakri.agent.AgentOptions;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.logging.DurationText;
import java.io.IOException;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.Option;

/** Flags every command shares. */
final class CommonFlags {
  static final Path DEFAULT_DEVICE_PLUGIN_DIR = Path.of("/var/lib/kubelet/device-plugins");
  static final Path DEFAULT_POD_RESOURCES = Path.of("/var/lib/kubelet/pod-resources/kubelet.sock");

  @Option(
      names = "--node-name",
      description =
          "This node's name (env JAKRI_NODE_NAME, Akri's AGENT_NODE_NAME or NODE_NAME; default:"
              + " host name).")
  String nodeName;

  @Option(
      names = "--device-plugin-dir",
      description =
          "Kubelet device-plugin directory (default /var/lib/kubelet/device-plugins; with"
              + " --emulate-kubelet a new temporary directory).")
  Path devicePluginDir;

  @Option(
      names = "--pod-resources-socket",
      description =
          "Kubelet PodResources socket (default /var/lib/kubelet/pod-resources/kubelet.sock;"
              + " with --emulate-kubelet pod-resources.sock in the device-plugin dir).")
  Path podResourcesSocket;

  /** The emulator's directory when the agent made it (removed when the agent stops). */
  Optional<Path> temporaryDir = Optional.empty();

  @Option(
      names = "--plugins-dir",
      description = "Directory of handler plugin jars (default: plugins/ next to the agent jar).")
  Path pluginsDir;

  @Option(
      names = "--offline-grace",
      description =
          "How long a vanished device stays, unhealthy, before its Instance goes, e.g. 60s, 2m"
              + " (default ${DEFAULT-VALUE}).",
      defaultValue = "60s",
      converter = DurationText.Converter.class)
  Duration offlineGrace;

  @Option(
      names = "--reclaim-grace",
      description =
          "How long a slot this node holds must be unused by every container (kubelet"
              + " PodResources) before it is freed, e.g. 20s (default ${DEFAULT-VALUE}).",
      defaultValue = "20s",
      converter = DurationText.Converter.class)
  Duration reclaimGrace;

  /**
   * The agent's options. With {@code emulate} and no {@code --device-plugin-dir} the emulator gets
   * a new temporary directory (said in one log line), never the kubelet's, and its PodResources
   * socket goes inside the emulator's directory unless {@code --pod-resources-socket} says
   * otherwise.
   */
  AgentOptions options(boolean standalone, Optional<Path> config, boolean emulate)
      throws IOException {
    Path dir = devicePluginDir;
    if (dir == null && emulate) {
      dir = Main.shortTempDirectory("jakri-kubelet-");
      temporaryDir = Optional.of(dir);
      LoggerFactory.getLogger(Main.class)
          .info(
              "kubelet emulator in the new temporary directory {} (--device-plugin-dir chooses"
                  + " another; removed when the agent stops)",
              dir);
    } else if (dir == null) {
      dir = DEFAULT_DEVICE_PLUGIN_DIR;
    }
    Path podResources = podResourcesSocket;
    if (podResources == null) {
      podResources =
          emulate ? dir.resolve(KubeletEmulator.POD_RESOURCES_SOCKET) : DEFAULT_POD_RESOURCES;
    }
    return new AgentOptions(
        nodeName(),
        standalone,
        config,
        emulate,
        dir,
        podResources,
        pluginsDir == null ? Main.defaultPluginsDir() : pluginsDir,
        offlineGrace,
        reclaimGrace);
  }

  String nodeName() {
    if (nodeName != null && !nodeName.isBlank()) {
      return nodeName;
    }
    String env = System.getenv("NODE_NAME");
    if (env != null && !env.isBlank()) {
      return env;
    }
    try {
      return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
    } catch (UnknownHostException e) {
      return "localhost";
    }
  }
}
