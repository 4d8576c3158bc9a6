package io.jakri.agent.cli;

import io.jakri.agent.validate.Validator;
import io.jakri.logging.EnvDefaults;
import java.io.PrintWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

/** {@code jakri-agent validate}: checks Configuration files offline. */
@Command(
    name = "validate",
    mixinStandardHelpOptions = true,
    defaultValueProvider = EnvDefaults.class,
    description =
        "Checks Configuration files offline: structure, names, YAML limits and, when the"
            + " handler is installed, its discoveryDetails. Problems on stderr (exit 1),"
            + " warnings and verdicts on stdout; warnings alone exit 0.")
final class ValidateCommand implements Callable<Integer> {
  @Parameters(arity = "1..*", paramLabel = "FILE", description = "Configuration YAML files.")
  List<Path> files;

  @Option(
      names = "--plugins-dir",
      description = "Handler plugins used to check discoveryDetails (default: next to the jar).")
  Path pluginsDir;

  @CommandLine.Mixin ClassDomainsFlag classDomains = new ClassDomainsFlag();

  @Option(
      names = "--device-plugin-dir",
      description =
          "Kubelet device-plugin directory whose checkpoint names the resources other device"
              + " plugins registered; read only, skipped when missing (default"
              + " ${DEFAULT-VALUE}).")
  Path devicePluginDir = Path.of("/var/lib/kubelet/device-plugins");

  @Override
  public Integer call() {
    // stderr carries the problems: keep the agent's INFO lines (plugins loaded) out of it.
    if (System.getenv("JAKRI_LOG_LEVEL") == null) {
      System.setProperty("JAKRI_LOG_LEVEL", "WARN");
    }
    return new Validator(
            pluginsDir == null ? Main.defaultPluginsDir() : pluginsDir,
            classDomains.domains(),
            Optional.ofNullable(devicePluginDir).filter(Files::isDirectory),
            new PrintWriter(System.out, true),
            new PrintWriter(System.err, true))
        .validate(files);
  }
}
