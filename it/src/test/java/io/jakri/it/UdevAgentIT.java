package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.instance.InstanceNames;
import io.jakri.handler.udev.KernelFacility;
import io.jakri.handler.udev.ZramDisk;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.DeviceSpecInfo;
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
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent (standalone, kubelet emulated, the udev plugin from {@code agent/target/plugins})
 * against the real kernel: a zram disk hot-added through {@code /sys/class/zram-control} becomes an
 * advertised resource whose container gets {@code UDEV_DEVNODE} and the node as a device; removed,
 * it turns Unhealthy at once and leaves after the offline grace. Needs root and zram: skipped
 * without, failed under {@code CI=true}.
 */
class UdevAgentIT {

  private static final Duration APPEAR = Duration.ofSeconds(20);
  private static final Duration DISAPPEAR = Duration.ofSeconds(30);
  private static final Duration OFFLINE_GRACE = Duration.ofSeconds(3);
  private static final String NODE = "node-it";
  private static final String UDEV_HANDLER_CLASS = "io/jakri/handler/udev/UdevHandler.class";

  private static Path plugins;

  @TempDir Path root;
  private Agent agent;
  private KubeletEmulator kubelet;
  private ZramDisk zram;
  private final Events events = new Events();

  /** What the emulated kubelet saw, with {@link System#nanoTime()} stamps. Thread-safe. */
  private static final class Events implements EmulatorListener {
    record Snapshot(String resource, Map<String, String> devices, long nanos) {}

    final List<Snapshot> snapshots = new CopyOnWriteArrayList<>();
    final Map<String, Long> streamEndedAt = new ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      snapshots.add(new Snapshot(resource, Map.copyOf(devices), System.nanoTime()));
    }

    @Override
    public void streamEnded(String resource) {
      streamEndedAt.putIfAbsent(resource, System.nanoTime());
    }

    Optional<Snapshot> first(String resource, String health) {
      return snapshots.stream()
          .filter(s -> s.resource().equals(resource))
          .filter(s -> !s.devices().isEmpty() && s.devices().containsValue(health))
          .findFirst();
    }
  }

  @BeforeAll
  static void checkPrerequisites() throws IOException {
    String dir = System.getProperty("jakri.plugins.dir");
    assertThat(dir).as("system property jakri.plugins.dir (set by the it pom)").isNotNull();
    plugins = Path.of(dir).toAbsolutePath().normalize();
    Path udevJar = plugins.resolve("jakri-handler-udev.jar");
    assertThat(udevJar).as("udev plugin jar; build the agent module first").exists();
    try (ZipFile jar = new ZipFile(udevJar.toFile())) {
      assertThat(jar.getEntry(UDEV_HANDLER_CLASS))
          .as("%s holds the udev handler", udevJar)
          .isNotNull();
    }
    KernelFacility.require(ZramDisk.available(), "root and /sys/class/zram-control (CONFIG_ZRAM)");
  }

  @BeforeEach
  void startAgent() throws IOException {
    Files.createDirectories(root.resolve("config"));
    agent =
        Agent.start(
            new AgentOptions(
                NODE,
                true,
                Optional.of(root.resolve("config")),
                true,
                root.resolve("device-plugins"),
                root.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                OFFLINE_GRACE));
    kubelet = agent.emulator().orElseThrow();
    kubelet.addListener(events);
  }

  @AfterEach
  void stopAll() throws Exception {
    if (zram != null) {
      zram.close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  private void configure(String name, String rule) throws IOException {
    String yaml =
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: udev
            discoveryDetails: |
              udevRules:
                - '%s'
              permissions: rw
              rescanIntervalSeconds: 3600
        """
            .formatted(name, rule);
    Path dir = root.resolve("config");
    Path tmp = dir.resolve("." + name + ".yaml.tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  private void awaitAdvertised(String resource) {
    await("capacity and allocatable 1 of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                kubelet.capacity().getOrDefault(resource, -1L) == 1
                    && kubelet.allocatable().getOrDefault(resource, -1L) == 1);
  }

  @Test
  void hotAddedZramDiskIsAdvertisedWithItsNodeThenUnhealthyOnRemovalThenGone() throws Exception {
    String configuration = "udev-zram";
    configure(configuration, "SUBSYSTEM==\"block\", KERNEL==\"zram*\"");
    // Warm-up: a zram disk that already exists (zram0 of the module) shows discovery is running,
    // so the timing below starts from a running discovery.
    Path zram0 = Path.of("/sys/class/block/zram0");
    if (Files.exists(zram0)) {
      String devpath = "/" + Path.of("/sys").relativize(zram0.toRealPath());
      awaitAdvertised("akri.sh/" + InstanceNames.instanceName(configuration, devpath, false, NODE));
    }
    zram = ZramDisk.add();
    String instance = InstanceNames.instanceName(configuration, zram.devpath(), false, NODE);
    String resource = "akri.sh/" + instance;

    await("first healthy snapshot of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> events.first(resource, "Healthy").isPresent());
    System.out.println(
        "UDEV_AGENT_TIMING hot_add_to_advertised_ms="
            + TimeUnit.NANOSECONDS.toMillis(
                events.first(resource, "Healthy").orElseThrow().nanos() - zram.startedNanos));
    awaitAdvertised(resource);
    assertThat(kubelet.devices(resource)).containsExactly(Map.entry(instance + "-0", "Healthy"));

    PodAdmission pod = kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1)));
    String hash = instance.substring(instance.length() - 6).toUpperCase(Locale.ROOT);
    assertThat(pod.container("c").envs())
        .containsEntry("UDEV_DEVNODE", zram.devnode())
        .containsEntry("UDEV_DEVNODE_" + hash, zram.devnode())
        .containsEntry("UDEV_DEVPATH", zram.devpath());
    assertThat(pod.container("c").devices())
        .contains(new DeviceSpecInfo(zram.devnode(), zram.devnode(), "rw"));
    kubelet.removePod("default", "p");

    long removed = zram.remove();
    await("unhealthy snapshot of " + resource)
        .atMost(DISAPPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(() -> events.first(resource, "Unhealthy").isPresent());
    assertThat(events.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    await("retirement of " + resource)
        .atMost(DISAPPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                !agent.devicePlugins().served().contains(resource)
                    && agent.instances().list().stream().noneMatch(i -> i.name().equals(instance)));
    long unhealthyAt = events.first(resource, "Unhealthy").orElseThrow().nanos();
    assertThat(Duration.ofNanos(System.nanoTime() - unhealthyAt))
        .as("time between unhealthy and retired")
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "UDEV_AGENT_REMOVAL unhealthy_ms="
            + TimeUnit.NANOSECONDS.toMillis(unhealthyAt - removed)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
