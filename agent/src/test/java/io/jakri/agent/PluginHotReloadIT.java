package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Plugin jars coming and going leave the other handlers' discoveries alone. */
class PluginHotReloadIT {

  private static final String CLASS = "example.com/sim";

  @TempDir Path tmp;
  private Agent agent;
  private KubeletEmulator kubelet;
  private Path plugins;
  private final List<Map<String, String>> snapshots = new CopyOnWriteArrayList<>();

  @BeforeEach
  void start() throws Exception {
    plugins = Files.createDirectories(tmp.resolve("plugins"));
    Files.copy(
        TestAgent.PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + CLASS));
    agent =
        Agent.start(
            new AgentOptions(
                "node-a",
                true,
                Optional.of(config),
                true,
                tmp.resolve("dp"),
                tmp.resolve("pr").resolve("kubelet.sock"),
                plugins,
                Duration.ofSeconds(3)));
    kubelet = EmulatedKubelet.of(agent).orElseThrow();
    kubelet.addListener(
        new EmulatorListener() {
          @Override
          public void snapshot(String resource, Map<String, String> devices) {
            if (resource.equals(CLASS)) {
              snapshots.add(Map.copyOf(devices));
            }
          }
        });
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> kubelet.allocatable().getOrDefault(CLASS, 0L) == 2);
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  private boolean anyUnhealthySnapshot() {
    return snapshots.stream().anyMatch(devices -> devices.containsValue("Unhealthy"));
  }

  @Test
  void loadingAnUnrelatedJarDoesNotRestartTheOtherHandlersDiscovery() throws Exception {
    snapshots.clear();
    PluginJars.build(
        plugins.resolve("unrelated.jar"),
        "unrelated",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Throwing.class),
        true);
    await().atMost(Duration.ofSeconds(10)).until(() -> agent.handlerNames().contains("thrower"));
    // Give a restart (stop, devices Unhealthy, start) time to show, then look.
    await()
        .pollDelay(Duration.ZERO)
        .during(Duration.ofSeconds(2))
        .atMost(Duration.ofSeconds(3))
        .until(() -> !anyUnhealthySnapshot());
    assertThat(kubelet.allocatable()).containsEntry(CLASS, 2L);
    assertThat(agent.discovery().statuses().get("sim").message()).doesNotContain("replaced");
  }

  @Test
  void removingAJarTurnsItsDevicesUnhealthyOnceAndThenRetiresThemWithoutFlapping()
      throws Exception {
    snapshots.clear();
    Files.delete(plugins.resolve("jakri-handler-simulated.jar"));
    await().atMost(Duration.ofSeconds(10)).until(this::anyUnhealthySnapshot);
    int firstUnhealthy =
        snapshots.indexOf(
            snapshots.stream()
                .filter(devices -> devices.containsValue("Unhealthy"))
                .findFirst()
                .orElseThrow());
    // After the offline grace (3 s) the class is no longer served at all (the kubelet keeps the
    // ended resource in its capacity, all unhealthy, until its own stale timeout).
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                !agent.devicePlugins().served().contains(CLASS)
                    && kubelet.allocatable().getOrDefault(CLASS, 0L) == 0);
    assertThat(snapshots.subList(firstUnhealthy, snapshots.size()))
        .as("no snapshot brings a device back once the jar is gone")
        .allSatisfy(devices -> assertThat(devices).doesNotContainValue("Healthy"));
  }
}
