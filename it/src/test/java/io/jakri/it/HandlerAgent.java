package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * One standalone agent for a handler agent IT: kubelet emulated, the shipped plugin jars, its
 * Configuration directory in the test's temp dir, and what the emulated kubelet saw with {@link
 * System#nanoTime()} stamps. One per test; close it after.
 */
final class HandlerAgent implements AutoCloseable {

  static final String NODE = "node-it";

  /** A ListAndWatch snapshot the emulated kubelet received. */
  record Snapshot(String resource, Map<String, String> devices, long nanos) {}

  private final Agent agent;
  private final KubeletEmulator kubelet;
  private final Path config;
  private final List<Snapshot> snapshots = new CopyOnWriteArrayList<>();
  private final Map<String, Long> streamEndedAt = new ConcurrentHashMap<>();

  private HandlerAgent(Agent agent, Path config) {
    this.agent = agent;
    this.config = config;
    this.kubelet = EmulatedKubelet.of(agent).orElseThrow();
    kubelet.addListener(
        new EmulatorListener() {
          @Override
          public void snapshot(String resource, Map<String, String> devices) {
            snapshots.add(new Snapshot(resource, Map.copyOf(devices), System.nanoTime()));
          }

          @Override
          public void streamEnded(String resource) {
            streamEndedAt.putIfAbsent(resource, System.nanoTime());
          }
        });
  }

  /**
   * The plugins directory the it pom names (the agent build's {@code agent/target/plugins}),
   * checked to hold {@code jakri-handler-<handler>.jar} with {@code handlerClass} in it.
   */
  static Path plugins(String handler, String handlerClass) throws IOException {
    String dir = System.getProperty("jakri.plugins.dir");
    assertThat(dir).as("system property jakri.plugins.dir (set by the it pom)").isNotNull();
    Path plugins = Path.of(dir).toAbsolutePath().normalize();
    Path jarPath = plugins.resolve("jakri-handler-" + handler + ".jar");
    assertThat(jarPath).as("%s plugin jar; build the agent module first", handler).exists();
    try (ZipFile jar = new ZipFile(jarPath.toFile())) {
      assertThat(jar.getEntry(handlerClass))
          .as("%s holds the %s handler (a stale jar? rebuild the agent module)", jarPath, handler)
          .isNotNull();
    }
    return plugins;
  }

  /** A missing real peer: fails under {@code CI=true}, else skips the test class. */
  static void peerUnavailable(String message) {
    if ("true".equals(System.getenv("CI"))) {
      Assertions.fail(message);
    }
    Assumptions.abort(message);
  }

  /** Starts the agent standalone in {@code root} with its kubelet emulator. */
  static HandlerAgent start(Path root, Path plugins, Duration offlineGrace) throws IOException {
    Path config = Files.createDirectories(root.resolve("config"));
    Agent agent =
        Agent.start(
            new AgentOptions(
                NODE,
                true,
                Optional.of(config),
                true,
                root.resolve("device-plugins"),
                root.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                offlineGrace));
    return new HandlerAgent(agent, config);
  }

  Agent agent() {
    return agent;
  }

  KubeletEmulator kubelet() {
    return kubelet;
  }

  /** Writes {@code <name>.yaml} into the Configuration directory atomically. */
  void writeConfiguration(String name, String yaml) throws IOException {
    Path tmp = config.resolve("." + name + ".yaml.tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        config.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  /** The first snapshot of {@code resource} listing a device in {@code health}, if any. */
  Optional<Snapshot> first(String resource, String health) {
    return snapshots.stream()
        .filter(s -> s.resource().equals(resource))
        .filter(s -> s.devices().containsValue(health))
        .findFirst();
  }

  /** Waits for the first snapshot of {@code resource} with a device in {@code health}. */
  Snapshot awaitFirst(String what, String resource, String health, Duration atMost) {
    await(what)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> first(resource, health).isPresent());
    return first(resource, health).orElseThrow();
  }

  /** Waits until the kubelet has capacity and allocatable 1 of {@code resource}. */
  void awaitAdvertised(String resource, Duration atMost) {
    await("capacity and allocatable 1 of " + resource)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                kubelet.capacity().getOrDefault(resource, -1L) == 1
                    && kubelet.allocatable().getOrDefault(resource, -1L) == 1);
  }

  /** Waits for the first Unhealthy snapshot of {@code resource}; returns its stamp. */
  Snapshot awaitUnhealthy(String resource, Duration atMost) {
    return awaitFirst("unhealthy snapshot of " + resource, resource, "Unhealthy", atMost);
  }

  /**
   * Waits until {@code resource} is no longer served, its Instance is gone and the kubelet's
   * ListAndWatch stream of it ended; returns when that stream ended.
   */
  long awaitRetired(String resource, String instance, Duration atMost) {
    await("retirement of " + resource)
        .atMost(atMost)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                !agent.devicePlugins().served().contains(resource)
                    && agent.instances().list().stream().noneMatch(i -> i.name().equals(instance)));
    await("end of the ListAndWatch stream of " + resource)
        .atMost(atMost)
        .until(() -> streamEndedAt.containsKey(resource));
    return streamEndedAt.get(resource);
  }

  /** Admits pod {@code default/p} whose container {@code c} asks for one {@code resource}. */
  PodAdmission admit(String resource) throws AdmissionException {
    return kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1)));
  }

  /** The suffix the agent appends to per-device env var names: the Instance's hash, upper case. */
  static String hashSuffix(String instance) {
    return instance.substring(instance.length() - 6).toUpperCase(Locale.ROOT);
  }

  /** Whole milliseconds from {@code fromNanos} to {@code toNanos} ({@link System#nanoTime()}). */
  static long millis(long fromNanos, long toNanos) {
    return TimeUnit.NANOSECONDS.toMillis(toNanos - fromNanos);
  }

  @Override
  public void close() {
    agent.close();
  }
}
