package io.jakri.agent.cli;

import io.jakri.agent.AgentOptions;
import io.jakri.agent.demo.Demo;
import io.jakri.agent.demo.SamplePods;
import io.jakri.agent.deviceplugin.ResourceServer.SocketNames;
import io.jakri.kubelet.emulator.EmulatorStartException;
import io.jakri.logging.DurationText;
import io.jakri.logging.EnvDefaults;
import io.jakri.logging.LogFormat;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code jakri-agent demo}: a standalone agent with the kubelet emulator and sample pods. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    defaultValueProvider = EnvDefaults.class,
    description =
        "Standalone agent + kubelet emulator + bundled example Configurations: prints the node's"
            + " capacity and what a pod receives, then follows live updates until Ctrl-C.")
final class DemoCommand implements Callable<Integer> {
  @Option(
      names = "--node-name",
      description = "Node name (default ${DEFAULT-VALUE}, as in the Spookd walkthrough).")
  String nodeName = Demo.DEFAULT_NODE;

  @Option(
      names = "--plugins-dir",
      description = "Directory of handler plugin jars (default: plugins/ next to the agent jar).")
  Path pluginsDir;

  @Option(
      names = "--work-dir",
      description = "Where the emulated kubelet's directories go (default: a new temp dir).")
  Path workDir;

  @Option(
      names = "--config",
      description = "Use these Configurations instead of the bundled examples.")
  Path config;

  @Option(
      names = "--offline-grace",
      converter = DurationText.Converter.class,
      defaultValue = "60s",
      description = "Offline grace period (default ${DEFAULT-VALUE}).")
  Duration offlineGrace;

  @Option(
      names = "--log-format",
      converter = LogFormat.Converter.class,
      description =
          "Log format: text (stderr) or json (stdout, mixed with the report) (env"
              + " JAKRI_LOG_FORMAT; default text).")
  LogFormat logFormat = LogFormat.TEXT;

  @Option(
      names = "--once",
      description = "Print the first report and exit instead of following updates.")
  boolean once;

  @Option(
      names = "--pod",
      paramLabel = "RESOURCE=N",
      description =
          "Admit a pod asking for N of RESOURCE and print its env (repeatable). Default: the"
              + " bundled examples' pods, or with --config one pod per class resource.")
  List<String> pods = new ArrayList<>();

  @Spec CommandSpec spec;

  @Override
  public Integer call() throws Exception {
    // A path that does not exist would run a demo of nothing and exit 0; say so instead.
    missing("--config", config);
    missing("--plugins-dir", pluginsDir);
    // The demo's output is the report on stdout; keep the log to warnings unless asked.
    if (System.getenv("JAKRI_LOG_LEVEL") == null) {
      System.setProperty("JAKRI_LOG_LEVEL", "WARN");
    }
    if (System.getenv("JAKRI_EMULATOR_LOG_LEVEL") == null) {
      System.setProperty("JAKRI_EMULATOR_LOG_LEVEL", "ERROR");
    }
    logFormat.apply(Optional.of(nodeName));
    Path work = workDir != null ? workDir : Main.shortTempDirectory("jakri-demo-");
    Optional<String> tooLong = SocketNames.tooLong(work.resolve("device-plugins"));
    if (tooLong.isPresent()) {
      // Nothing could be served there: say so instead of a demo of nothing.
      System.err.println(
          "jakri-agent demo: "
              + tooLong.get()
              + (workDir != null ? " (--work-dir)" : " (--work-dir chooses another)"));
      if (workDir == null) {
        Main.deleteTree(work);
      }
      return 2;
    }
    Path configPath = config != null ? config : Demo.writeBundledExamples(work.resolve("config"));
    AgentOptions options =
        new AgentOptions(
            nodeName,
            true,
            Optional.of(configPath),
            true,
            work.resolve("device-plugins"),
            work.resolve("pod-resources").resolve("kubelet.sock"),
            pluginsDir == null ? Main.defaultPluginsDir() : pluginsDir,
            offlineGrace);
    SamplePods samples;
    try {
      samples =
          !pods.isEmpty()
              ? SamplePods.requested(pods.stream().map(SamplePods.Request::parse).toList())
              : config != null ? SamplePods.eachClass() : SamplePods.bundled();
    } catch (IllegalArgumentException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
    try {
      return new Demo(options, once, new PrintWriter(System.out, true), samples).run();
    } catch (EmulatorStartException e) {
      System.err.println("jakri-agent demo: " + e.getMessage());
      return 1;
    } finally {
      if (workDir == null) {
        // Ours alone (a fresh temp dir): leave nothing behind.
        Main.deleteTree(work);
      }
    }
  }

  /** Refuses, as a mistake in the flags (one line, exit 2), a path given that does not exist. */
  private void missing(String flag, Path path) {
    if (path != null && !Files.exists(path)) {
      throw new CommandLine.ParameterException(
          spec.commandLine(), flag + " " + path + ": no such file or directory");
    }
  }
}
