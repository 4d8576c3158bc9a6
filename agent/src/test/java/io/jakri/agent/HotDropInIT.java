package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Handler jars dropped into, replaced in and removed from a running agent's plugins dir. */
class HotDropInIT {

  @TempDir Path tmp;
  private Agent agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  private Agent start(Path plugins, Duration grace) throws Exception {
    Files.createDirectories(tmp.resolve("config"));
    return Agent.start(
        new AgentOptions(
            "node-a",
            true,
            Optional.of(tmp.resolve("config")),
            true,
            tmp.resolve("dp"),
            tmp.resolve("pr").resolve("kubelet.sock"),
            plugins,
            grace));
  }

  /** Copies a jar the way installers should: under a temporary name, then renamed into place. */
  private static void dropIn(Path jar, Path plugins, String name) throws Exception {
    Path partial = plugins.resolve(name + ".part");
    Files.copy(jar, partial, StandardCopyOption.REPLACE_EXISTING);
    Files.move(
        partial,
        plugins.resolve(name),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  @Test
  void droppedInJarStartsWaitingConfigurationsAndRemovingItStopsThem() throws Exception {
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    dropIn(TestAgent.PLUGINS.resolve("jakri-handler-static.jar"), plugins, "static.jar");
    agent = start(plugins, Duration.ofSeconds(1));
    KubeletEmulator kubelet = EmulatedKubelet.of(agent).orElseThrow();
    Files.writeString(
        tmp.resolve("config").resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: example.com/sim"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                agent.discovery().statuses().containsKey("sim")
                    && agent.discovery().statuses().get("sim").state()
                        == DiscoveryManager.State.HANDLER_MISSING);

    // A broken jar next to it is reported and changes nothing else.
    Files.writeString(plugins.resolve("broken.jar"), "this is not a zip file");
    dropIn(TestAgent.PLUGINS.resolve("jakri-handler-simulated.jar"), plugins, "simulated.jar");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> kubelet.allocatable().getOrDefault("example.com/sim", 0L) == 2);
    assertThat(agent.discovery().statuses().get("sim").state())
        .isEqualTo(DiscoveryManager.State.DISCOVERING);

    // Replacing the jar (new file, same handler) restarts its discovery; devices stay.
    Files.setLastModifiedTime(
        TestAgent.PLUGINS.resolve("jakri-handler-simulated.jar"),
        java.nio.file.attribute.FileTime.fromMillis(System.currentTimeMillis()));
    dropIn(TestAgent.PLUGINS.resolve("jakri-handler-simulated.jar"), plugins, "simulated.jar");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> kubelet.allocatable().getOrDefault("example.com/sim", 0L) == 2);

    // Removing it stops discovery: devices turn unhealthy and leave after the grace period.
    Files.delete(plugins.resolve("simulated.jar"));
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                agent.discovery().statuses().get("sim").state()
                    == DiscoveryManager.State.HANDLER_MISSING);
    await().atMost(Duration.ofSeconds(15)).until(() -> agent.devicePlugins().served().isEmpty());
    assertThat(agent.instances().list()).isEmpty();
  }
}
