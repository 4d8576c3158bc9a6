package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Broken and misbehaving plugins are reported and contained; everything else keeps working. */
class PluginIsolationIT {

  @TempDir Path tmp;
  private Agent agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  @Test
  void brokenMisbehavingAndTooNewPluginsAreContained() throws Exception {
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    Files.copy(
        TestAgent.PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    Files.writeString(plugins.resolve("not-a-zip.jar"), "garbage bytes");
    Files.writeString(plugins.resolve("README.txt"), "not a jar at all");
    PluginJars.build(
        plugins.resolve("no-manifest.jar"),
        "x",
        "",
        List.of(MisbehavingHandlers.Throwing.class),
        false);
    PluginJars.build(
        plugins.resolve("too-new.jar"),
        "too-new",
        ">=99.0.0",
        List.of(MisbehavingHandlers.Throwing.class),
        true);
    PluginJars.build(
        plugins.resolve("misbehaving.jar"),
        "misbehaving",
        ">=0.1.0",
        List.of(
            MisbehavingHandlers.Throwing.class,
            MisbehavingHandlers.Hanging.class,
            MisbehavingHandlers.Garbage.class,
            MisbehavingHandlers.FailingOnce.class),
        true);

    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("thrower.yaml"), TestAgent.configuration("thrower", "thrower", 1, ""));
    Files.writeString(
        config.resolve("hanger.yaml"), TestAgent.configuration("hanger", "hanger", 1, ""));
    Files.writeString(
        config.resolve("garbage.yaml"), TestAgent.configuration("garbage", "garbage", 1, ""));
    Files.writeString(
        config.resolve("flaky.yaml"), TestAgent.configuration("flaky", "flaky", 1, ""));
    Files.writeString(
        config.resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: example.com/sim"));
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
                Duration.ofSeconds(60)));
    KubeletEmulator kubelet = EmulatedKubelet.of(agent).orElseThrow();

    // The good handler works.
    await()
        .atMost(Duration.ofSeconds(15))
        .until(() -> kubelet.allocatable().getOrDefault("example.com/sim", 0L) == 2);

    // Each broken jar is reported with its file name and a reason.
    assertThat(agent.pluginProblems())
        .extracting(p -> p.jar().getFileName().toString())
        .contains("not-a-zip.jar", "no-manifest.jar", "too-new.jar")
        .doesNotContain("README.txt", "misbehaving.jar", "jakri-handler-simulated.jar");
    assertThat(agent.pluginProblems())
        .filteredOn(p -> p.jar().getFileName().toString().equals("too-new.jar"))
        .singleElement()
        .satisfies(p -> assertThat(p.reason()).isNotBlank());

    // A handler that throws is reported and restarted with backoff; one that hangs times out.
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () -> {
              var statuses = agent.discovery().statuses();
              // Starts are asynchronous: a status appears once a start failed or timed out.
              assertThat(statuses).containsKeys("thrower", "hanger");
              assertThat(statuses.get("thrower").state()).isEqualTo(State.FAILED);
              assertThat(statuses.get("thrower").message()).contains("boom", "restarting in");
              assertThat(statuses.get("hanger").state()).isEqualTo(State.FAILED);
              assertThat(statuses.get("hanger").message()).contains("did not start");
            });

    // Garbage is filtered: only the well-formed, distinct devices become Instances.
    String good = "akri.sh/" + InstanceNames.instanceName("garbage", "good", true, "node-a");
    String huge = "akri.sh/" + InstanceNames.instanceName("garbage", "huge", true, "node-a");
    String dup = "akri.sh/" + InstanceNames.instanceName("garbage", "dup", true, "node-a");
    await()
        .atMost(Duration.ofSeconds(15))
        .until(
            () ->
                kubelet.allocatable().getOrDefault(good, 0L) == 1
                    && kubelet.allocatable().getOrDefault(huge, 0L) == 1
                    && kubelet.allocatable().getOrDefault(dup, 0L) == 1);
    assertThat(
            agent.instances().list().stream().filter(i -> i.configurationName().equals("garbage")))
        .hasSize(3);
    Map<String, String> env =
        kubelet.admit(Pod.of("default", "p", Container.of("c", huge, 1))).container("c").envs();
    assertThat(env).doesNotContainKey("LD_PRELOAD").hasSizeLessThanOrEqualTo(2 * 256);

    // A handler that reports failure is restarted and its device comes back healthy.
    String flaky = "akri.sh/" + InstanceNames.instanceName("flaky", "flaky-0", true, "node-a");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet.allocatable().getOrDefault(flaky, 0L) == 1);

    // Through all of this the good handler kept serving.
    assertThat(kubelet.allocatable()).containsEntry("example.com/sim", 2L);
  }
}
