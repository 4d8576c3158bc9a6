package io.jakri.agent;

import static org.awaitility.Awaitility.await;

import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * A standalone agent with its kubelet emulator in a temp dir, using the handler jars that {@code
 * mvn package} put in {@code target/plugins}. For integration tests.
 */
public final class TestAgent implements AutoCloseable {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  final Path root;
  final Path configDir;
  final Path devicePluginDir;
  final Agent agent;

  private TestAgent(Path root, Agent agent) {
    this.root = root;
    this.configDir = root.resolve("config");
    this.devicePluginDir = root.resolve("device-plugins");
    this.agent = agent;
  }

  static TestAgent start(Path root, String node, Duration offlineGrace, boolean emulate)
      throws IOException {
    return start(root, node, offlineGrace, emulate, o -> o);
  }

  /** As above, with the options changed by {@code adjust} (e.g. CDI turned on). */
  static TestAgent start(
      Path root,
      String node,
      Duration offlineGrace,
      boolean emulate,
      java.util.function.UnaryOperator<AgentOptions> adjust)
      throws IOException {
    Files.createDirectories(root.resolve("config"));
    AgentOptions options =
        new AgentOptions(
            node,
            true,
            Optional.of(root.resolve("config")),
            emulate,
            root.resolve("device-plugins"),
            root.resolve("pod-resources").resolve("kubelet.sock"),
            PLUGINS,
            offlineGrace);
    return new TestAgent(root, Agent.start(adjust.apply(options)));
  }

  KubeletEmulator kubelet() {
    return EmulatedKubelet.of(agent).orElseThrow();
  }

  void writeConfig(String fileName, String yaml) throws IOException {
    Path tmp = configDir.resolve("." + fileName + ".tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        configDir.resolve(fileName),
        java.nio.file.StandardCopyOption.ATOMIC_MOVE,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING);
  }

  void deleteConfig(String fileName) throws IOException {
    Files.delete(configDir.resolve(fileName));
  }

  /** Waits until the emulator reports {@code count} capacity for {@code resource}. */
  void awaitCapacity(String resource, long count) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet().capacity().getOrDefault(resource, -1L) == count);
  }

  void awaitAllocatable(String resource, long count) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet().allocatable().getOrDefault(resource, -1L) == count);
  }

  public static String configuration(String name, String handler, int capacity, String details) {
    StringBuilder yaml = new StringBuilder();
    yaml.append("apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: ")
        .append(name)
        .append("\nspec:\n  capacity: ")
        .append(capacity)
        .append("\n  discoveryHandler:\n    name: ")
        .append(handler)
        .append("\n    discoveryDetails: |\n");
    details.lines().forEach(l -> yaml.append("      ").append(l).append('\n'));
    return yaml.toString();
  }

  @Override
  public void close() {
    agent.close();
  }
}
