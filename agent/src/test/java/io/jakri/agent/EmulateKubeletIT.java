package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged agent's {@code --emulate-kubelet} never touches a real kubelet: without {@code
 * --device-plugin-dir} it uses a new temporary directory (named in one log line, removed at exit);
 * a directory whose {@code kubelet.sock} accepts connections is refused with one line and nothing
 * in it changes; an unusable directory is one line too, not a stack trace.
 */
class EmulateKubeletIT {

  private static final Pattern TEMP_DIR =
      Pattern.compile("kubelet emulator in the new temporary directory (\\S+) ");

  @TempDir Path tmp;

  private Path config() throws IOException {
    Path config = Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        config.resolve("sim.yaml"), TestAgent.configuration("sim", "simulated", 1, "count: 1"));
    return config;
  }

  private Process start(List<String> jvm, List<String> args) throws IOException {
    List<String> all = new ArrayList<>(args);
    all.addAll(List.of("--discovery-handlers-dir", tmp.resolve("akri").toString()));
    return startWithout(jvm, all);
  }

  /** Starts the agent with only {@code args} after the common ones (no discovery-handlers dir). */
  private Process startWithout(List<String> jvm, List<String> args) throws IOException {
    List<String> command = new ArrayList<>();
    command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
    command.addAll(jvm);
    command.addAll(
        List.of(
            "-jar",
            JsonLogIT.JAR.toString(),
            "--standalone",
            "--config",
            config().toString(),
            "--emulate-kubelet",
            "--node-name",
            "node-a",
            "--plugins-dir",
            TestAgent.PLUGINS.toString()));
    command.addAll(args);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectOutput(tmp.resolve("stdout").toFile())
            .redirectError(tmp.resolve("stderr").toFile());
    builder.environment().remove("JAKRI_LOG_FORMAT");
    builder.environment().remove("JAKRI_DEVICE_PLUGIN_DIR");
    builder.environment().remove("JAKRI_POD_RESOURCES_SOCKET");
    builder.environment().remove("JAKRI_DISCOVERY_HANDLERS_DIR");
    builder.environment().remove("DISCOVERY_HANDLERS_DIRECTORY");
    return builder.start();
  }

  private int exitCode(Process agent) throws Exception {
    try {
      assertThat(agent.waitFor(60, TimeUnit.SECONDS)).as("agent exited").isTrue();
      return agent.exitValue();
    } finally {
      agent.destroyForcibly();
    }
  }

  private List<String> stderr() throws IOException {
    return Files.readAllLines(tmp.resolve("stderr"));
  }

  private void assertOneErrorLineAndNoStackTrace(String expected) throws IOException {
    List<String> lines = stderr();
    assertThat(lines.stream().filter(l -> l.startsWith("jakri-agent:")))
        .as(String.join("\n", lines))
        .containsExactly(expected);
    assertThat(lines)
        .as(String.join("\n", lines))
        .noneMatch(l -> l.startsWith("\tat ") || l.contains("Exception"));
  }

  private static boolean accepts(Path socket) {
    try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      return c.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void aDirectoryWhoseKubeletSockAnswersIsRefusedWithOneLineAndNothingIsRemoved() throws Exception {
    Path dp = Files.createDirectories(tmp.resolve("dp"));
    Path kubelet = dp.resolve(KubeletEmulator.KUBELET_SOCKET);
    try (ServerSocketChannel realKubelet = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ServerSocketChannel otherPlugin = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      realKubelet.bind(UnixDomainSocketAddress.of(kubelet));
      Path other = dp.resolve("vendor-gpu.sock");
      otherPlugin.bind(UnixDomainSocketAddress.of(other));

      Process agent = start(List.of(), List.of("--device-plugin-dir", dp.toString()));

      assertThat(exitCode(agent)).isEqualTo(1);
      assertOneErrorLineAndNoStackTrace(
          "jakri-agent: --emulate-kubelet: a kubelet is already serving "
              + kubelet
              + ": the kubelet emulator will not take its place; give it a directory of its own");
      assertThat(accepts(kubelet)).isTrue();
      assertThat(accepts(other)).isTrue();
      try (var files = Files.list(dp)) {
        assertThat(files.map(p -> p.getFileName().toString()))
            .containsExactlyInAnyOrder("kubelet.sock", "vendor-gpu.sock");
      }
    }
  }

  @Test
  void aDirectoryThatCannotBeMadeIsOneClearLine() throws Exception {
    Path file = Files.writeString(tmp.resolve("a-file"), "not a directory");
    Path dp = file.resolve("device-plugins");

    Process agent = start(List.of(), List.of("--device-plugin-dir", dp.toString()));

    assertThat(exitCode(agent)).isEqualTo(1);
    assertOneErrorLineAndNoStackTrace(
        "jakri-agent: --emulate-kubelet: cannot create directory "
            + dp
            + ": a part of its path is not a directory");
    assertThat(file).hasContent("not a directory");
  }

  @Test
  void withoutADirectoryTheEmulatorGetsANewTemporaryOneRemovedAtExit() throws Exception {
    boolean kubeletDirExisted = Files.exists(Path.of("/var/lib/kubelet"));
    Path systemTemp = Files.createDirectories(tmp.resolve("system-tmp"));

    Process agent = start(List.of("-Djava.io.tmpdir=" + systemTemp), List.of());
    Path dir;
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(tmp.resolve("stderr")).contains("discovered as instance"));
      Matcher m = TEMP_DIR.matcher(Files.readString(tmp.resolve("stderr")));
      assertThat(m.find()).as(String.join("\n", stderr())).isTrue();
      dir = Path.of(m.group(1));
      assertThat(dir.getParent()).isEqualTo(systemTemp);
      assertThat(dir.getFileName().toString()).startsWith("jakri-kubelet-");
      assertThat(accepts(dir.resolve(KubeletEmulator.KUBELET_SOCKET))).isTrue();
      assertThat(accepts(dir.resolve(KubeletEmulator.POD_RESOURCES_SOCKET))).isTrue();
      agent.destroy(); // SIGTERM
      assertThat(exitCode(agent)).isZero();
    } finally {
      agent.destroyForcibly();
    }
    assertThat(stderr().stream().filter(l -> TEMP_DIR.matcher(l).find())).hasSize(1);
    assertThat(dir).doesNotExist();
    if (!kubeletDirExisted) {
      assertThat(Path.of("/var/lib/kubelet")).doesNotExist();
    }
  }

  private static final Pattern AKRI_TEMP_DIR =
      Pattern.compile("discovery handlers register in the new temporary directory (\\S+) ");

  @Test
  void withoutADiscoveryHandlersDirectoryHandlersRegisterInATemporaryOneNeverVarLibAkri()
      throws Exception {
    boolean akriDirExisted = Files.exists(Path.of("/var/lib/akri"));
    // The test's own directory as java.io.tmpdir, not a subdirectory: a Unix socket's path has at
    // most 107 bytes.
    Path systemTemp = tmp;

    Process agent = startWithout(List.of("-Djava.io.tmpdir=" + systemTemp), List.of());
    Path dir;
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(tmp.resolve("stderr")).contains("discovered as instance"));
      Matcher m = AKRI_TEMP_DIR.matcher(Files.readString(tmp.resolve("stderr")));
      assertThat(m.find()).as(String.join("\n", stderr())).isTrue();
      dir = Path.of(m.group(1));
      assertThat(dir.getParent()).isEqualTo(systemTemp);
      assertThat(dir.getFileName().toString()).startsWith("jakri-discovery-handlers-");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> accepts(dir.resolve("agent-registration.sock")));
      agent.destroy(); // SIGTERM
      assertThat(exitCode(agent)).isZero();
    } finally {
      agent.destroyForcibly();
    }
    assertThat(stderr().stream().filter(l -> AKRI_TEMP_DIR.matcher(l).find())).hasSize(1);
    assertThat(dir).doesNotExist();
    if (!akriDirExisted) {
      assertThat(Path.of("/var/lib/akri")).doesNotExist();
    }
  }

  @Test
  void aDiscoveryHandlersDirectoryAnotherAgentServesIsRefusedWithOneLine() throws Exception {
    Path akri = Files.createDirectories(tmp.resolve("taken-akri"));
    Path socket = akri.resolve("agent-registration.sock");
    try (ServerSocketChannel otherAgent = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      otherAgent.bind(UnixDomainSocketAddress.of(socket));

      Process agent = startWithout(List.of(), List.of("--discovery-handlers-dir", akri.toString()));

      assertThat(exitCode(agent)).isEqualTo(1);
      assertOneErrorLineAndNoStackTrace(
          "jakri-agent: --discovery-handlers-dir: "
              + socket
              + " answers: another agent serves this discovery-handlers directory; with"
              + " --emulate-kubelet give it a directory of its own, none, or no directory for a"
              + " temporary one");
      assertThat(accepts(socket)).isTrue();
    }
  }
}
