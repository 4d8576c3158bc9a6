package io.jakri.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.AgentOptions;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import picocli.CommandLine;

/** Where the agent puts the kubelet emulator: never in the kubelet's directories by default. */
class MainOptionsTest {

  @TempDir Path tmp;

  private static Main parse(String... args) {
    Main main = new Main();
    new CommandLine(main).parseArgs(args);
    return main;
  }

  @Test
  void emulatorWithoutADirectoryGetsAFreshTemporaryOneHoldingItsPodResourcesSocket()
      throws Exception {
    Main first = parse("--standalone", "--config", "c.yaml", "--emulate-kubelet");
    Main second = parse("--standalone", "--config", "c.yaml", "--emulate-kubelet");

    AgentOptions a = first.common.options(true, Optional.of(Path.of("c.yaml")), true);
    AgentOptions b = second.common.options(true, Optional.of(Path.of("c.yaml")), true);
    try {
      Path systemTemp = Path.of(System.getProperty("java.io.tmpdir")).toRealPath();
      assertThat(a.devicePluginDir()).isDirectory().isEmptyDirectory();
      assertThat(a.devicePluginDir().toRealPath()).startsWith(systemTemp);
      assertThat(a.devicePluginDir().toString()).doesNotContain("/var/lib/kubelet");
      assertThat(a.devicePluginDir()).isNotEqualTo(b.devicePluginDir());
      assertThat(a.podResourcesSocket())
          .isEqualTo(a.devicePluginDir().resolve(KubeletEmulator.POD_RESOURCES_SOCKET));
      assertThat(first.common.temporaryDir).contains(a.devicePluginDir());
    } finally {
      Main.removeTemporaryDir(a.devicePluginDir());
      Main.removeTemporaryDir(b.devicePluginDir());
    }
    assertThat(a.devicePluginDir()).doesNotExist();
  }

  @Test
  void aGivenDirectoryIsUsedAndThePodResourcesSocketMovesWithIt() throws Exception {
    Path dir = tmp.resolve("dp");
    Main main =
        parse(
            "--standalone",
            "--config",
            "c.yaml",
            "--emulate-kubelet",
            "--device-plugin-dir",
            dir.toString());

    AgentOptions options = main.common.options(true, Optional.of(Path.of("c.yaml")), true);

    assertThat(options.devicePluginDir()).isEqualTo(dir);
    assertThat(options.podResourcesSocket())
        .isEqualTo(dir.resolve(KubeletEmulator.POD_RESOURCES_SOCKET));
    assertThat(main.common.temporaryDir).isEmpty();
    assertThat(dir).doesNotExist(); // the emulator creates it when it starts
  }

  @Test
  void aGivenPodResourcesSocketWins() throws Exception {
    Path socket = tmp.resolve("pr.sock");
    Main main =
        parse(
            "--standalone",
            "--config",
            "c.yaml",
            "--emulate-kubelet",
            "--device-plugin-dir",
            tmp.toString(),
            "--pod-resources-socket",
            socket.toString());

    AgentOptions options = main.common.options(true, Optional.of(Path.of("c.yaml")), true);

    assertThat(options.podResourcesSocket()).isEqualTo(socket);
  }

  @Test
  void withoutTheEmulatorTheKubeletsPathsStayTheDefaults() throws Exception {
    Main main = parse("--standalone", "--config", "c.yaml");

    AgentOptions options = main.common.options(true, Optional.of(Path.of("c.yaml")), false);

    assertThat(options.devicePluginDir()).isEqualTo(Path.of("/var/lib/kubelet/device-plugins"));
    assertThat(options.podResourcesSocket())
        .isEqualTo(Path.of("/var/lib/kubelet/pod-resources/kubelet.sock"));
    assertThat(main.common.temporaryDir).isEmpty();
  }

  @Test
  void theTemporaryDirectoryIsKeptWhenSomethingElseIsInIt() throws Exception {
    Path dir = Files.createDirectories(tmp.resolve("emulator"));
    Files.writeString(dir.resolve(KubeletEmulator.CHECKPOINT_FILE), "{}");
    Path notes = Files.writeString(dir.resolve("notes.txt"), "mine");

    Main.removeTemporaryDir(dir);

    assertThat(dir.resolve(KubeletEmulator.CHECKPOINT_FILE)).doesNotExist();
    assertThat(notes).hasContent("mine");
  }

  @Test
  void draIsOffByDefaultAndItsDirectoriesDefaultToTheKubelets() {
    assertThat(parse().draOptions()).isEmpty();
    io.jakri.agent.dra.DraOptions dra = parse("--dra").draOptions().orElseThrow();
    assertThat(dra.registrationSocket())
        .isEqualTo(java.nio.file.Path.of("/var/lib/kubelet/plugins_registry/akri.sh-reg.sock"));
    assertThat(dra.draSocket())
        .isEqualTo(java.nio.file.Path.of("/var/lib/kubelet/plugins/akri.sh/dra.sock"));
    io.jakri.agent.dra.DraOptions moved =
        parse("--dra", "--dra-registry-dir", "/tmp/r", "--dra-plugins-dir", "/tmp/p")
            .draOptions()
            .orElseThrow();
    assertThat(moved.registrationSocket())
        .isEqualTo(java.nio.file.Path.of("/tmp/r/akri.sh-reg.sock"));
    assertThat(moved.draSocket()).isEqualTo(java.nio.file.Path.of("/tmp/p/akri.sh/dra.sock"));
  }

  @Test
  void withTheEmulatorDraDirectoriesGoInsideItsDirectoryNeverTheKubelets() {
    java.nio.file.Path emulator = tmp.resolve("emulated");
    io.jakri.agent.dra.DraOptions dra =
        parse("--dra").draOptions(java.util.Optional.of(emulator)).orElseThrow();
    assertThat(dra.registryDir()).isEqualTo(emulator.resolve("plugins_registry"));
    assertThat(dra.draSocket()).isEqualTo(emulator.resolve("plugins/akri.sh/dra.sock"));
  }

  @Test
  void cdiIsOffUnlessAskedFor() throws Exception {
    Main main = parse("--standalone", "--config", "c.yaml", "--emulate-kubelet");

    assertThat(main.cdiDir()).isEmpty();
    assertThat(main.common.options(true, Optional.of(Path.of("c.yaml")), true).cdiDir()).isEmpty();
  }

  @Test
  void cdiWithTheEmulatorGoesToAFreshTemporaryDirectoryNeverTheNodes() throws Exception {
    Main main = parse("--standalone", "--config", "c.yaml", "--emulate-kubelet", "--cdi");

    Path dir = main.cdiDir().orElseThrow();
    try {
      assertThat(dir).isDirectory().isEmptyDirectory();
      assertThat(dir.toRealPath())
          .startsWith(Path.of(System.getProperty("java.io.tmpdir")).toRealPath());
      assertThat(dir).isNotEqualTo(Main.DEFAULT_CDI_DIR);
    } finally {
      Main.deleteTree(dir);
    }
  }

  @Test
  void cdiOnANodeUsesTheRuntimesDirectoryUnlessToldOtherwise() throws Exception {
    assertThat(parse("--cdi").cdiDir()).contains(Path.of("/var/run/cdi"));
    assertThat(parse("--cdi", "--cdi-dir", tmp.toString()).cdiDir()).contains(tmp);
    assertThat(
            parse(
                    "--standalone",
                    "--config",
                    "c.yaml",
                    "--emulate-kubelet",
                    "--cdi",
                    "--cdi-dir",
                    tmp.toString())
                .cdiDir())
        .contains(tmp);
  }

  @Test
  void aCdiDirectoryWithoutCdiIsRefused() {
    java.io.StringWriter err = new java.io.StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setErr(new java.io.PrintWriter(err, true));

    assertThat(cmd.execute("--cdi-dir", tmp.toString())).isEqualTo(2);
  }

  @Test
  void theEmulatorsAgentRegistersDiscoveryHandlersInATemporaryDirectoryNotVarLibAkri()
      throws Exception {
    boolean namedByEnv =
        System.getenv("DISCOVERY_HANDLERS_DIRECTORY") != null
            || System.getenv("JAKRI_DISCOVERY_HANDLERS_DIR") != null;
    // In CI nothing may hide this test: an environment naming a directory fails it there.
    assertThat(namedByEnv && "true".equals(System.getenv("CI")))
        .as("CI=true with DISCOVERY_HANDLERS_DIRECTORY or JAKRI_DISCOVERY_HANDLERS_DIR set")
        .isFalse();
    org.junit.jupiter.api.Assumptions.assumeFalse(
        namedByEnv, "the environment names a discovery-handlers directory");
    Main emulated = parse("--standalone", "--config", "c.yaml", "--emulate-kubelet");
    Path dir = emulated.externalHandlers().orElseThrow().directory();
    try {
      assertThat(dir).isDirectory().isEmptyDirectory();
      assertThat(dir.toRealPath())
          .startsWith(Path.of(System.getProperty("java.io.tmpdir")).toRealPath());
      assertThat(dir.getFileName().toString()).startsWith("jakri-discovery-handlers-");
    } finally {
      Main.deleteTree(dir);
    }

    Main real = parse("--standalone", "--config", "c.yaml");
    assertThat(real.externalHandlers().orElseThrow().directory())
        .isEqualTo(Path.of("/var/lib/akri"));

    Main named =
        parse(
            "--standalone",
            "--config",
            "c.yaml",
            "--emulate-kubelet",
            "--discovery-handlers-dir",
            tmp.toString());
    assertThat(named.externalHandlers().orElseThrow().directory()).isEqualTo(tmp);
    Main none =
        parse(
            "--standalone",
            "--config",
            "c.yaml",
            "--emulate-kubelet",
            "--discovery-handlers-dir",
            "none");
    assertThat(none.externalHandlers()).isEmpty();
  }
}
