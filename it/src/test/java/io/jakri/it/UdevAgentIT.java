package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.crd.InstanceNames;
import io.jakri.handler.udev.KernelFacility;
import io.jakri.handler.udev.ZramDisk;
import io.jakri.kubelet.emulator.DeviceSpecInfo;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
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
  private static final String NODE = HandlerAgent.NODE;

  private static Path plugins;

  @TempDir Path root;
  private HandlerAgent agent;
  private KubeletEmulator kubelet;
  private ZramDisk zram;

  @BeforeAll
  static void checkPrerequisites() throws IOException {
    plugins = HandlerAgent.plugins("udev", "io/jakri/handler/udev/UdevHandler.class");
    KernelFacility.require(ZramDisk.available(), "root and /sys/class/zram-control (CONFIG_ZRAM)");
  }

  @BeforeEach
  void startAgent() throws IOException {
    agent = HandlerAgent.start(root, plugins, OFFLINE_GRACE);
    kubelet = agent.kubelet();
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
    agent.writeConfiguration(
        name,
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
            .formatted(name, rule));
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
      agent.awaitAdvertised(
          "akri.sh/" + InstanceNames.instanceName(configuration, devpath, false, NODE), APPEAR);
    }
    zram = ZramDisk.add();
    String instance = InstanceNames.instanceName(configuration, zram.devpath(), false, NODE);
    String resource = "akri.sh/" + instance;

    long healthyAt =
        agent
            .awaitFirst("first healthy snapshot of " + resource, resource, "Healthy", APPEAR)
            .nanos();
    System.out.println(
        "UDEV_AGENT_TIMING hot_add_to_advertised_ms="
            + HandlerAgent.millis(zram.startedNanos, healthyAt));
    agent.awaitAdvertised(resource, APPEAR);
    assertThat(kubelet.devices(resource)).containsExactly(Map.entry(instance + "-0", "Healthy"));

    PodAdmission pod = agent.admit(resource);
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(pod.container("c").envs())
        .containsEntry("UDEV_DEVNODE", zram.devnode())
        .containsEntry("UDEV_DEVNODE_" + hash, zram.devnode())
        .containsEntry("UDEV_DEVPATH", zram.devpath());
    assertThat(pod.container("c").devices())
        .contains(new DeviceSpecInfo(zram.devnode(), zram.devnode(), "rw"));
    kubelet.removePod("default", "p");

    long removed = zram.remove();
    long unhealthyAt = agent.awaitUnhealthy(resource, DISAPPEAR).nanos();
    assertThat(agent.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    agent.awaitRetired(resource, instance, DISAPPEAR);
    assertThat(Duration.ofNanos(System.nanoTime() - unhealthyAt))
        .as("time between unhealthy and retired")
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "UDEV_AGENT_REMOVAL unhealthy_ms="
            + HandlerAgent.millis(removed, unhealthyAt)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
