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
                  TestAgent.PLUGINS.toString(),
                  "--discovery-handlers-dir",
                  dp.resolveSibling("akri").toString()));
      try {
        await()
            .atMost(Duration.ofSeconds(30))
            .until(() -> kubelet.allocatable().getOrDefault("example.com/sim", 0L) == 3);
        assertThat(kubelet.registeredResources()).hasSize(4);
        // --discovery-handlers-dir: Akri's registration socket is served there
        assertThat(dp.resolveSibling("akri").resolve("agent-registration.sock")).exists();

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
    // The views are the demo's own, labelled with the command that shows the same on a cluster,
    // never as a command that ran; the capacity and allocatable numbers are explained.
    assertThat(output.lines())
        .contains(
            "Instances (as `kubectl get akrii` would list them on a cluster):",
            "The same Instances in full (as `kubectl get akrii -o yaml` would print them):",
            "Node minikube's capacity (as `kubectl get node minikube -o"
                + " jsonpath='{.status.capacity}'` would show it):",
            "Node minikube's allocatable (as `kubectl get node minikube -o"
                + " jsonpath='{.status.allocatable}'` would show it):",
            "Node minikube's allocatable after these pods (as `kubectl get node minikube -o"
                + " jsonpath='{.status.allocatable}'` would show it):",
            "Pod spookd-test asking for 1 of example.com/thingamajig, 1 of example.com/widget,"
                + " admitted by the emulated kubelet: its device env (as `kubectl exec"
                + " spookd-test -- env | sort` would show it):")
        .anyMatch(l -> l.startsWith("  capacity: the devices the agent advertises per resource;"))
        .anyMatch(l -> l.startsWith("  allocatable: of those, the ones advertised healthy."))
        .noneMatch(l -> l.startsWith("$ "));
    for (String line : io.jakri.agent.model.EnvContractTest.spookdSeedEnvLines()) {
      assertThat(output).contains(line + System.lineSeparator());
    }
    assertThat(new File(tmp.resolve("work").resolve("device-plugins").toString())).isDirectory();
  }

  @Test
  void demoWithYourOwnConfigurationsAdmitsOnePodPerClassAndListsTheInstances() throws Exception {
    Path config = Files.createDirectories(tmp.resolve("mine"));
    Files.writeString(
        config.resolve("cams.yaml"),
        TestAgent.configuration(
            "my-cams", "simulated", 2, "count: 2\nidPrefix: cam\nproperties: {STREAM: rtsp}\n"));
    String output = runDemo(List.of("--config", config.toString()));
    assertThat(output)
        .contains(
            "Pod akri-sh-my-cams-0 asking for 1 of akri.sh/my-cams, admitted by the emulated"
                + " kubelet: its device env (as `kubectl exec akri-sh-my-cams-0 -- env | sort` would"
                + " show it):")
        .contains("STREAM=rtsp")
        .contains("The same Instances in full (as `kubectl get akrii -o yaml` would print them):")
        .contains("configurationName: my-cams")
        .contains("deviceUsage:");
  }

  @Test
  void demoPodOptionAdmitsExactlyTheRequestedPods() throws Exception {
    Path config = Files.createDirectories(tmp.resolve("mine"));
    Files.writeString(
        config.resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 3\nidPrefix: dev\n"));
    String output = runDemo(List.of("--config", config.toString(), "--pod", "akri.sh/sim=2"));
    assertThat(output)
        .contains("Pod akri-sh-sim-0 asking for 2 of akri.sh/sim, admitted by the emulated kubelet")
        .doesNotContain("akri-sh-sim-1 -- env");
    assertThat(output.lines().filter(l -> l.endsWith("_NUM_DEVICES=2")).count())
        .as(output)
        .isEqualTo(1);
  }

  @Test
  void demoOfAValidCapacityOneStaticDeviceShowsNoFailure() throws Exception {
    Path config = Files.createDirectories(tmp.resolve("mine"));
    Files.writeString(
        config.resolve("widgets.yaml"),
        TestAgent.configuration(
            "widgets",
            "static",
            1,
            "deviceMapping:\n"
                + "  - hosts: [minikube]\n"
                + "    devices:\n"
                + "      - resourceName: example.com/widget\n"
                + "        instanceID: \"1\"\n"
                + "        env: {FLOOR: \"1\"}\n"));
    String output = runDemo(List.of("--config", config.toString()));
    assertThat(output)
        .contains("Pod example-com-widget-0 asking for 1 of example.com/widget, admitted")
        .contains("EXAMPLECOM_WIDGET_FLOOR=1");
    // One pod for the one slot: none of the Instance's own resource, which shares that slot.
    assertThat(output.lines().filter(l -> l.startsWith("Pod "))).hasSize(1);
    assertThat(output.toLowerCase(java.util.Locale.ROOT))
        .doesNotContain("not admitted")
        .doesNotContain("unavailable")
        .doesNotContain("fail")
        .doesNotContain("error")
        .doesNotContain("warn");
  }

  @Test
  void demoWithoutAWorkDirLeavesNothingInTheTempDir() throws Exception {
    Path temp = Files.createDirectories(tmp.resolve("java-tmp"));
    List<String> command =
        List.of(
            Path.of(System.getProperty("java.home"), "bin", "java").toString(),
            "-Djava.io.tmpdir=" + temp,
            "-jar",
            JAR.toString(),
            "demo",
            "--once",
            "--plugins-dir",
            TestAgent.PLUGINS.toString());
    Process demo =
        new ProcessBuilder(command)
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("agent.log").toFile())
            .start();
    assertThat(demo.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(tmp.resolve("agent.log"));
    assertThat(demo.exitValue()).as(output).isZero();
    // The demo really served its devices in its own directory (a directory too long for sockets
    // once made it wait 30 s, serve nothing and exit 0).
    assertThat(output)
        .containsPattern("jakri-demo-[0-9a-f]{8}/device-plugins")
        .containsPattern("(?m)^spookd-[0-9a-f]{6}-[0-9]+\\.sock$")
        .doesNotContain("cannot serve");
    try (Stream<Path> left = Files.list(temp)) {
      assertThat(left.map(p -> p.getFileName().toString()))
          .as("left in java.io.tmpdir")
          .noneMatch(name -> name.startsWith("jakri-demo-"));
    }
  }

  @Test
  void demoInAWorkDirTooLongForSocketsIsOneClearLineAndExitTwo() throws Exception {
    Path work = tmp.resolve("w".repeat(100));
    String output =
        exitsTwo(
            List.of(
                "demo",
                "--once",
                "--work-dir",
                work.toString(),
                "--plugins-dir",
                TestAgent.PLUGINS.toString()));
    assertThat(output.strip().lines())
        .as(output)
        .containsExactly(
            "jakri-agent demo: device-plugin directory "
                + work.resolve("device-plugins")
                + " is "
                + (work.resolve("device-plugins").toString().length())
                + " bytes long: no socket in it fits the 107 bytes a Unix socket path may have;"
                + " use a directory of at most 78 bytes (--work-dir)");
  }

  @Test
  void agentWithADevicePluginDirTooLongForSocketsIsOneClearLineAndExitTwo() throws Exception {
    Path dir = tmp.resolve("d".repeat(100));
    Path config = Files.createDirectories(tmp.resolve("config"));
    String output =
        exitsTwo(
            List.of(
                "--standalone",
                "--config",
                config.toString(),
                "--emulate-kubelet",
                "--device-plugin-dir",
                dir.toString(),
                "--plugins-dir",
                TestAgent.PLUGINS.toString()));
    assertThat(output)
        .contains("jakri-agent: device-plugin directory " + dir + " is ")
        .contains("(--device-plugin-dir)")
        .doesNotContain("\tat ");
    assertThat(dir).doesNotExist();
  }

  /** Runs the jar with {@code args}; it exits 2; its output. */
  private String exitsTwo(List<String> args) throws Exception {
    Process process = startAgent(args);
    assertThat(process.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(tmp.resolve("agent.log"));
    assertThat(process.exitValue()).as(output).isEqualTo(2);
    return output;
  }

  @Test
  void demoPodOptionThatIsMalformedIsOneClearLine() throws Exception {
    Process demo = startAgent(List.of("demo", "--once", "--pod", "widget=x"));
    assertThat(demo.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(tmp.resolve("agent.log"));
    assertThat(demo.exitValue()).isNotZero();
    assertThat(output).contains("--pod \"widget=x\"").doesNotContain("\tat ");
  }

  private String runDemo(List<String> extra) throws Exception {
    List<String> args =
        new java.util.ArrayList<>(
            List.of(
                "demo",
                "--once",
                "--work-dir",
                tmp.resolve("work").toString(),
                "--plugins-dir",
                TestAgent.PLUGINS.toString()));
    args.addAll(extra);
    Process demo = startAgent(args);
    assertThat(demo.waitFor(60, TimeUnit.SECONDS)).isTrue();
    String output = Files.readString(tmp.resolve("agent.log"));
    assertThat(demo.exitValue()).as(output).isZero();
    return output;
  }
}
