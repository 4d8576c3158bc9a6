package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Runs the packaged agent jar as a real process. */
class AgentProcessIT {

  static final Path JAR = Path.of("target", "jakri-agent.jar").toAbsolutePath();

  @TempDir Path tmp;

  private Process startAgent(List<String> args) throws Exception {
    List<String> command =
        new java.util.ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString()));
    command.addAll(args);
    return new ProcessBuilder(command)
        .redirectErrorStream(true)
        .redirectOutput(tmp.resolve("agent.log").toFile())
        .start();
  }

  @Test
  void sigtermEndsStreamsRemovesSocketsAndExitsZero() throws Exception {
    Path dp = tmp.resolve("dp");
    Path config = tmp.resolve("config");
    Files.createDirectories(config);
    Files.writeString(
        config.resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 3\nresourceName: example.com/sim"));
    try (KubeletEmulator kubelet = KubeletEmulator.builder(dp).build()) {
      kubelet.start();
      Process agent =
          startAgent(
              List.of(
                  "--standalone",
                  "--config",
                  config.toString(),
                  "--device-plugin-dir",
                  dp.toString(),
                  "--node-name",
                  "node-a",
                  "--plugins-dir",
                  TestAgent.PLUGINS.toString()));
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kubelet.allocatable().getOrDefault("example.com/sim", 0L) == 3);
        assertThat(kubelet.registeredResources()).hasSize(4);

        agent.destroy(); // SIGTERM
        assertThat(agent.waitFor(20, TimeUnit.SECONDS)).isTrue();
        assertThat(agent.exitValue()).as(Files.readString(tmp.resolve("agent.log"))).isZero();
        // Every stream ended: the kubelet sees every resource unhealthy.
        await().atMost(Duration.ofSeconds(5)).until(() -> kubelet.registeredResources().isEmpty());
        assertThat(kubelet.allocatable().values()).containsOnly(0L);
        try (Stream<Path> files = Files.list(dp)) {
          assertThat(files.map(p -> p.getFileName().toString()).filter(n -> n.endsWith(".sock")))
              .containsExactlyInAnyOrder(
                  KubeletEmulator.KUBELET_SOCKET, KubeletEmulator.POD_RESOURCES_SOCKET);
        }
      } finally {
        agent.destroyForcibly();
      }
    }
  }

  @Test
  void badCommandLineExitsNonZeroWithUsage() throws Exception {
    Process agent = startAgent(List.of("--no-such-flag"));
    assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(agent.exitValue()).isNotZero();
    assertThat(Files.readString(tmp.resolve("agent.log"))).contains("Unknown option");
  }

  @Test
  void demoOncePrintsCapacityAndTheSpookdEnv() throws Exception {
    Process demo =
        startAgent(
            List.of(
                "demo",
                "--once",
                "--work-dir",
                tmp.resolve("work").toString(),
                "--plugins-dir",
                TestAgent.PLUGINS.toString()));
    assertThat(demo.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(tmp.resolve("agent.log"));
    assertThat(demo.exitValue()).as(output).isZero();
    assertThat(output)
        .contains("\"akri.sh/akri-debug-echo-foo-8120fe\": \"2\"")
        .contains("\"example.com/widget\": \"1\"")
        .contains("DEBUG_ECHO_DESCRIPTION_8120FE=foo0");
    for (String line : io.jakri.agent.allocation.EnvContractTest.spookdSeedEnvLines()) {
      assertThat(output).contains(line + System.lineSeparator());
    }
    assertThat(new File(tmp.resolve("work").resolve("device-plugins").toString())).isDirectory();
  }
}
