package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.Safeguards;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import java.util.stream.Stream;

/**
 * A standalone agent with its kubelet emulator under one temp dir, for fault tests, plus the
 * process measurements the tests compare before and after a fault (fds, threads, heap).
 */
final class FaultAgent implements AutoCloseable {

  /** The handler jars {@code mvn package} put in {@code target/plugins}. */
  static final Path PACKAGED_PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  final Path root;
  final Path configDir;
  final Path devicePluginDir;
  final Agent agent;

  private FaultAgent(Path root, Path configDir, Path devicePluginDir, Agent agent) {
    this.root = root;
    this.configDir = configDir;
    this.devicePluginDir = devicePluginDir;
    this.agent = agent;
  }

  static FaultAgent start(Path root, Path plugins, Duration offlineGrace) throws IOException {
    return start(root, plugins, offlineGrace, Optional.empty());
  }

  /** With {@code observer} told every event of the agent's event stream. */
  static FaultAgent start(
      Path root,
      Path plugins,
      Duration offlineGrace,
      java.util.function.Consumer<io.jakri.agent.events.AgentReport> observer)
      throws IOException {
    return start(
        root, plugins, offlineGrace, Optional.empty(), Safeguards.defaults(), -1, observer);
  }

  static FaultAgent start(
      Path root, Path plugins, Duration offlineGrace, Optional<Duration> reclaimGrace)
      throws IOException {
    return start(root, plugins, offlineGrace, reclaimGrace, Safeguards.defaults());
  }

  static FaultAgent start(
      Path root,
      Path plugins,
      Duration offlineGrace,
      Optional<Duration> reclaimGrace,
      Safeguards safeguards)
      throws IOException {
    return start(root, plugins, offlineGrace, reclaimGrace, safeguards, -1);
  }

  /** With metrics served on {@code metricsPort} (0: any free port; negative: off). */
  static FaultAgent start(
      Path root,
      Path plugins,
      Duration offlineGrace,
      Optional<Duration> reclaimGrace,
      Safeguards safeguards,
      int metricsPort)
      throws IOException {
    return start(root, plugins, offlineGrace, reclaimGrace, safeguards, metricsPort, event -> {});
  }

  private static FaultAgent start(
      Path root,
      Path plugins,
      Duration offlineGrace,
      Optional<Duration> reclaimGrace,
      Safeguards safeguards,
      int metricsPort,
      java.util.function.Consumer<io.jakri.agent.events.AgentReport> observer)
      throws IOException {
    Path config = Files.createDirectories(root.resolve("config"));
    Path dp = root.resolve("device-plugins");
    AgentOptions options =
        new AgentOptions(
            "node-a",
            true,
            Optional.of(config),
            true,
            dp,
            root.resolve("pod-resources").resolve("kubelet.sock"),
            plugins,
            offlineGrace);
    if (reclaimGrace.isPresent()) {
      options = options.withReclaimGrace(reclaimGrace.get());
    }
    options = options.withSafeguards(safeguards);
    options = options.withMetricsPort(metricsPort);
    return new FaultAgent(root, config, dp, Agent.start(options, Optional.empty(), observer));
  }

  /** Slots held (by any node, through any resource) over every Instance of a Configuration. */
  long slotsHeld(String configuration) {
    try {
      return agent.instances().list().stream()
          .filter(i -> i.configurationName().equals(configuration))
          .flatMap(i -> i.deviceUsage().values().stream())
          .filter(u -> !(u instanceof io.jakri.crd.SlotUsage.Free))
          .count();
    } catch (io.jakri.agent.instance.StoreException e) {
      throw new IllegalStateException(e);
    }
  }

  /** A plugins dir holding copies of the named packaged handler jars. */
  static Path pluginsWith(Path dir, String... packagedJars) throws IOException {
    Files.createDirectories(dir);
    for (String jar : packagedJars) {
      Files.copy(
          PACKAGED_PLUGINS.resolve(jar), dir.resolve(jar), StandardCopyOption.REPLACE_EXISTING);
    }
    return dir;
  }

  KubeletEmulator kubelet() {
    return EmulatedKubelet.of(agent).orElseThrow();
  }

  void writeConfig(String name, String yaml) throws IOException {
    Path tmp = configDir.resolve("." + name + ".tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        configDir.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  void deleteConfig(String name) throws IOException {
    Files.delete(configDir.resolve(name + ".yaml"));
  }

  long allocatable(String resource) {
    return kubelet().allocatable().getOrDefault(resource, -1L);
  }

  void awaitAllocatable(String resource, long count, Duration within) {
    await().atMost(within).until(() -> allocatable(resource) == count);
  }

  /** Waits until {@code configuration} is INVALID with a message containing {@code reason}. */
  void awaitRefused(String configuration, String reason, Duration within) {
    await()
        .atMost(within)
        .untilAsserted(
            () -> {
              DiscoveryManager.ConfigurationStatus status =
                  agent.discovery().statuses().get(configuration);
              assertThat(status).isNotNull();
              assertThat(status.state()).isEqualTo(DiscoveryManager.State.INVALID);
              assertThat(status.message()).contains(reason);
            });
  }

  /** Waits until {@code configuration} is discovering (again). */
  void awaitDiscovering(String configuration, Duration within) {
    await()
        .atMost(within)
        .until(
            () ->
                agent.discovery().statuses().get(configuration).state()
                    == DiscoveryManager.State.DISCOVERING);
  }

  long instancesOf(String configuration) {
    try {
      return agent.instances().list().stream()
          .filter(i -> i.configurationName().equals(configuration))
          .count();
    } catch (io.jakri.agent.instance.StoreException e) {
      throw new IllegalStateException(e);
    }
  }

  /** Socket files in the device-plugin dir. */
  long socketFiles() throws IOException {
    try (Stream<Path> files = Files.list(devicePluginDir)) {
      return files.filter(p -> p.getFileName().toString().endsWith(".sock")).count();
    }
  }

  @Override
  public void close() {
    agent.close();
  }

  /** Open file descriptors of this JVM. */
  static long openFds() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    }
  }

  static int threads() {
    return ManagementFactory.getThreadMXBean().getThreadCount();
  }

  /** Heap in use after asking for a collection (approximate, for bounds, not exact figures). */
  static long heapAfterGc() {
    for (int i = 0; i < 3; i++) {
      System.gc();
    }
    return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
  }

  /** Deletes a directory tree; true when it is gone. */
  static boolean deleteTree(Path root) throws IOException {
    if (!Files.exists(root)) {
      return true;
    }
    try (Stream<Path> walk = Files.walk(root)) {
      for (Path p : walk.sorted(java.util.Comparator.reverseOrder()).toList()) {
        Files.deleteIfExists(p);
      }
    }
    return !Files.exists(root);
  }
}
