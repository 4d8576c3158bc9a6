package io.jakri.agent.cli;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.OutOfMemoryExit;
import io.jakri.agent.Safeguards;
import io.jakri.agent.cluster.WatchedNamespaces;
import io.jakri.agent.deviceplugin.ResourceServer.SocketNames;
import io.jakri.agent.discovery.HandlerLimits;
import io.jakri.agent.discovery.SlotLimits;
import io.jakri.agent.dra.DraOptions;
import io.jakri.agent.external.DirectoryInUseException;
import io.jakri.agent.external.ExternalHandlers;
import io.jakri.agent.model.ContainerPaths;
import io.jakri.kubelet.emulator.EmulatorStartException;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.logging.CommonPool;
import io.jakri.logging.DurationText;
import io.jakri.logging.EnvDefaults;
import io.jakri.logging.LogFormat;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import sun.misc.Signal;

/**
 * The agent's command line: run the agent, {@code demo}, {@code validate}. Every flag also reads an
 * env var ({@code --node-name} from {@code JAKRI_NODE_NAME}, Akri's {@code AGENT_NODE_NAME} or
 * {@code NODE_NAME}, {@code --device-plugin-dir} from {@code JAKRI_DEVICE_PLUGIN_DIR}, ...). Only
 * this class exits the process.
 */
@Command(
    name = "jakri-agent",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "jakri node agent: discovers devices and serves them to the kubelet.",
    defaultValueProvider = EnvDefaults.class,
    subcommands = {DemoCommand.class, ValidateCommand.class})
public final class Main implements Callable<Integer> {

  @CommandLine.Mixin CommonFlags common = new CommonFlags();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  @Option(
      names = "--standalone",
      description = "Read Configurations from --config instead of the API server.")
  boolean standalone;

  @Option(names = "--config", description = "Configuration YAML file or directory (standalone).")
  Path config;

  @Option(
      names = "--emulate-kubelet",
      description =
          "Serve a built-in kubelet emulator on kubelet.sock in the device-plugin dir (default: a"
              + " new temporary directory; it refuses a directory whose kubelet.sock answers).")
  boolean emulateKubelet;

  /**
   * Akri's agent's env vars of the same settings, read when jakri's own {@code JAKRI_...} is unset
   * (a DaemonSet written for Akri's agent keeps working): flag to Akri's name.
   */
  static final Map<String, String> AKRI_ENV =
      Map.of("--node-name", "AGENT_NODE_NAME", "--metrics-port", "METRICS_PORT");

  /** Where flags not given take their defaults from; set by {@link #commandLine}. */
  private EnvDefaults env = new EnvDefaults();

  public static void main(String[] args) {
    CommonPool.size();
    System.exit(commandLine().execute(args));
  }

  /**
   * The command line as {@link #main} runs it: a mistake in the flags (an unknown flag, a value
   * that does not convert) is one line on stderr, {@code jakri-agent: <what is wrong> (see
   * --help)}, and exit code 2; no usage dump, no stack trace.
   */
  static CommandLine commandLine() {
    return commandLine(System::getenv);
  }

  /** {@link #commandLine()} reading {@code environment} (a test's map) for flag defaults. */
  static CommandLine commandLine(java.util.function.UnaryOperator<String> environment) {
    Main main = new Main();
    main.env = new EnvDefaults(environment, AKRI_ENV);
    CommandLine cmd = new CommandLine(main).setCaseInsensitiveEnumValuesAllowed(true);
    // Only the agent's own flags: demo and validate keep reading JAKRI_... alone.
    cmd.getCommandSpec().defaultValueProvider(main.env);
    cmd.setParameterExceptionHandler(
        (e, args) -> {
          CommandLine where = e.getCommandLine();
          where
              .getErr()
              .println(
                  where.getCommandSpec().qualifiedName()
                      + ": "
                      + e.getMessage()
                      + " (see "
                      + where.getCommandSpec().qualifiedName()
                      + " --help)");
          return where.getCommandSpec().exitCodeOnInvalidInput();
        });
    return cmd;
  }

  @Option(
      names = "--namespaces",
      split = ",",
      paramLabel = "NS[,NS...]",
      description =
          "Cluster mode: watch Configurations only in these namespaces (env JAKRI_NAMESPACES;"
              + " default: every namespace, as Akri). Each Configuration's Instances go to its"
              + " own namespace.")
  List<String> namespaces = new ArrayList<>();

  @Option(
      names = "--namespace",
      description =
          "Cluster mode: watch only this one namespace (env JAKRI_NAMESPACE; the same as"
              + " --namespaces with one name).")
  String namespace;

  @Option(
      names = "--tidy-node",
      negatable = true,
      defaultValue = "true",
      fallbackValue = "true",
      description =
          "Cluster mode: remove akri.sh/... keys this agent no longer serves from its Node's"
              + " capacity and allocatable (default true; --no-tidy-node turns it off).")
  boolean tidyNode = true;

  @Option(
      names = "--label-node",
      description =
          "Cluster mode: label this agent's Node akri.sh/<configuration>=<number of its Instances"
              + " on the node>, kept current, removed when the last one goes (env"
              + " JAKRI_LABEL_NODE; default false; needs get and patch on nodes).")
  boolean labelNode;

  @Option(
      names = "--metrics-port",
      converter = PortConverter.class,
      description =
          "Serve /metrics (Prometheus), /healthz and /readyz on this port (env"
              + " JAKRI_METRICS_PORT; default: off).")
  Integer metricsPort;

  @Option(
      names = "--metrics-bind-address",
      description =
          "Address --metrics-port listens on (env JAKRI_METRICS_BIND_ADDRESS; default"
              + " ${DEFAULT-VALUE}: every interface).")
  String metricsBindAddress = Safeguards.DEFAULT_METRICS_BIND_ADDRESS;

  @Option(
      names = "--allow-reserved-broker-env",
      description =
          "Let brokerProperties set env names that change how programs run (LD_PRELOAD, PATH,"
              + " JAVA_TOOL_OPTIONS, ...); without it such a Configuration is refused (env"
              + " JAKRI_ALLOW_RESERVED_BROKER_ENV).")
  boolean allowReservedBrokerEnv;

  @CommandLine.Mixin ClassDomainsFlag classDomains = new ClassDomainsFlag();

  @Option(
      names = "--allow-host-mount-prefix",
      split = ",",
      paramLabel = "PATH",
      description =
          "Let handlers mount host paths inside PATH (absolute, normalised) although they are"
              + " system or kubelet directories (/etc, /var/lib/kubelet, ...); repeatable or"
              + " comma-separated (env JAKRI_ALLOW_HOST_MOUNT_PREFIX; default: none).")
  List<String> allowHostMountPrefixes = new ArrayList<>();

  @Option(
      names = "--max-slots-per-configuration",
      description =
          "Most slots (capacity x devices) of one Configuration on this node; devices beyond are"
              + " refused (env JAKRI_MAX_SLOTS_PER_CONFIGURATION; default ${DEFAULT-VALUE}).")
  long maxSlotsPerConfiguration = SlotLimits.DEFAULT_PER_CONFIGURATION;

  @Option(
      names = "--max-slots-per-agent",
      description =
          "Most slots of all Configurations on this node (env JAKRI_MAX_SLOTS_PER_AGENT; default"
              + " ${DEFAULT-VALUE}, sized to the chart's 384Mi memory limit).")
  long maxSlotsPerAgent = SlotLimits.DEFAULT_PER_AGENT;

  @Option(
      names = "--handler-call-timeout",
      converter = DurationText.Converter.class,
      description =
          "How long a call into a discovery handler plugin (validate, start, close) or a task on"
              + " its scheduler may run before its thread is abandoned and counted as stranded"
              + " (env JAKRI_HANDLER_CALL_TIMEOUT; default 10s).")
  Duration handlerCallTimeout = HandlerLimits.DEFAULT_CALL_TIMEOUT;

  @Option(
      names = "--handler-stranded-threads",
      description =
          "Most stranded threads a handler plugin may have before it gets no new call (env"
              + " JAKRI_HANDLER_STRANDED_THREADS; default ${DEFAULT-VALUE}).")
  int handlerStrandedThreads = HandlerLimits.DEFAULT_STRANDED_THREADS;

  @Option(
      names = "--disable-handlers",
      split = ",",
      paramLabel = "NAME[,NAME...]",
      description =
          "Discovery handlers switched off on this node, by the name Configurations use (e.g."
              + " udev,onvif): a Configuration naming one finds no handler (env"
              + " JAKRI_DISABLE_HANDLERS; the chart: <handler>.discovery.enabled=false).")
  List<String> disableHandlers = new ArrayList<>();

  @Option(
      names = "--log-format",
      converter = LogFormat.Converter.class,
      description =
          "Log format: text (lines on stderr) or json (one JSON object per line on stdout)"
              + " (env JAKRI_LOG_FORMAT; default text).")
  LogFormat logFormat = LogFormat.TEXT;

  @Option(
      names = "--discovery-handlers-dir",
      description =
          "Directory where Akri-protocol discovery handlers register (agent-registration.sock)"
              + " and put their sockets (env DISCOVERY_HANDLERS_DIRECTORY or"
              + " JAKRI_DISCOVERY_HANDLERS_DIR; default /var/lib/akri, with --emulate-kubelet a"
              + " new temporary directory, where a directory another agent serves is refused;"
              + " none: off).")
  String discoveryHandlersDir;

  @Option(
      names = "--external-handler-keepalive",
      converter = KeepaliveConverter.class,
      description =
          "How long a Discover stream of an Akri-protocol handler may be silent before the agent"
              + " sends an HTTP/2 PING; a handler that answers neither the PING nor a new"
              + " connection within 10s, for 30s, is dropped (env JAKRI_EXTERNAL_HANDLER_KEEPALIVE;"
              + " default 30s; at least 10s). Handlers on gRPC servers that refuse PINGs more"
              + " often than every 5m (grpc-go, grpc-java, Python grpcio defaults) want 5m or a"
              + " server option permitting them.")
  Duration externalHandlerKeepalive = ExternalHandlers.Settings.DEFAULT_KEEPALIVE;

  @Option(
      names = "--dra",
      description =
          "Cluster mode: publish this node's devices as resource.k8s.io/v1 ResourceSlices (driver"
              + " akri.sh) and serve the kubelet's DRA plugin API (env JAKRI_DRA; default off, not"
              + " yet proven on a real cluster).")
  boolean dra;

  @Option(
      names = "--dra-registry-dir",
      description =
          "With --dra: the kubelet's plugin-watcher directory, where akri.sh-reg.sock goes (env"
              + " JAKRI_DRA_REGISTRY_DIR; default /var/lib/kubelet/plugins_registry).")
  Path draRegistryDir;

  @Option(
      names = "--dra-plugins-dir",
      description =
          "With --dra: the kubelet's plugins directory, where akri.sh/dra.sock goes (env"
              + " JAKRI_DRA_PLUGINS_DIR; default /var/lib/kubelet/plugins).")
  Path draPluginsDir;

  /** One line per Akri env var a flag not given took its value from (see {@link #AKRI_ENV}). */
  List<String> akriEnvUsed() {
    return spec == null || spec.commandLine().getParseResult() == null
        ? List.of()
        : env.akriNamesUsed(spec.commandLine().getParseResult());
  }

  /** The DRA settings the flags ask for; empty when {@code --dra} is off. */
  Optional<DraOptions> draOptions() {
    return draOptions(Optional.empty());
  }

  /**
   * The DRA settings the flags ask for. With the kubelet emulator ({@code emulatorDir} present)
   * directories not given go inside the emulator's directory, never the kubelet's.
   */
  Optional<DraOptions> draOptions(Optional<Path> emulatorDir) {
    if (!dra) {
      return Optional.empty();
    }
    Path registry =
        draRegistryDir != null
            ? draRegistryDir
            : emulatorDir
                .map(d -> d.resolve(DRA_EMULATED_REGISTRY))
                .orElse(DraOptions.DEFAULT_REGISTRY_DIR);
    Path plugins =
        draPluginsDir != null
            ? draPluginsDir
            : emulatorDir
                .map(d -> d.resolve(DRA_EMULATED_PLUGINS))
                .orElse(DraOptions.DEFAULT_PLUGINS_DIR);
    return Optional.of(new DraOptions(registry, plugins));
  }

  /** With the emulator: the DRA directories inside its directory. */
  static final String DRA_EMULATED_REGISTRY = "plugins_registry";

  static final String DRA_EMULATED_PLUGINS = "plugins";

  @Option(
      names = "--cdi",
      description =
          "Write a CDI spec (akri.sh-<instance>.json, kind akri.sh/<configuration>) for every"
              + " Instance served here into --cdi-dir, and name the CDI devices in Allocate (env"
              + " JAKRI_CDI; default off).")
  boolean cdi;

  @Option(
      names = "--cdi-dir",
      description =
          "Directory of the CDI specs with --cdi (env JAKRI_CDI_DIR; default /var/run/cdi; with"
              + " --emulate-kubelet a new temporary directory).")
  Path cdiDir;

  /** The default CDI directory of containerd and CRI-O for generated specs. */
  static final Path DEFAULT_CDI_DIR = Path.of("/var/run/cdi");

  /** The CDI directory the agent made itself (removed when it stops). */
  private Optional<Path> temporaryCdiDir = Optional.empty();

  /**
   * Where CDI specs go: empty without {@code --cdi}; with {@code --emulate-kubelet} and no {@code
   * --cdi-dir} a new temporary directory (a demo never writes into the node's real one).
   */
  Optional<Path> cdiDir() throws IOException {
    if (!cdi) {
      return Optional.empty();
    }
    if (cdiDir != null) {
      return Optional.of(cdiDir);
    }
    if (emulateKubelet) {
      Path dir = Files.createTempDirectory("jakri-cdi-");
      temporaryCdiDir = Optional.of(dir);
      LoggerFactory.getLogger(Main.class)
          .info(
              "CDI specs in the new temporary directory {} (--cdi-dir chooses another; removed"
                  + " when the agent stops)",
              dir);
      return Optional.of(dir);
    }
    return Optional.of(DEFAULT_CDI_DIR);
  }

  /** The discovery-handlers directory the agent made itself (removed when it stops). */
  private Optional<Path> temporaryDiscoveryHandlersDir = Optional.empty();

  /**
   * The discovery-handlers directory from the flag, the env vars or Akri's default. With {@code
   * --emulate-kubelet} and no directory named, a new temporary directory instead of Akri's {@code
   * /var/lib/akri} (an agent trying things out never takes the node's real one).
   */
  Optional<ExternalHandlers.Options> externalHandlers() throws IOException {
    String dir = discoveryHandlersDir;
    if (dir == null || dir.isBlank()) {
      dir = System.getenv(ExternalHandlers.DIRECTORY_ENV);
    }
    ExternalHandlers.Settings settings =
        ExternalHandlers.Settings.DEFAULT.withKeepalive(externalHandlerKeepalive);
    if ((dir == null || dir.isBlank()) && emulateKubelet) {
      Path temporary = Files.createTempDirectory("jakri-discovery-handlers-");
      temporaryDiscoveryHandlersDir = Optional.of(temporary);
      LoggerFactory.getLogger(Main.class)
          .info(
              "Akri-protocol discovery handlers register in the new temporary directory {}"
                  + " (--discovery-handlers-dir chooses another; removed when the agent stops)",
              temporary);
      return Optional.of(new ExternalHandlers.Options(temporary, settings));
    }
    if (dir == null || dir.isBlank()) {
      return Optional.of(
          new ExternalHandlers.Options(ExternalHandlers.DEFAULT_DIRECTORY, settings));
    }
    if (dir.strip().equalsIgnoreCase("none")) {
      return Optional.empty();
    }
    return Optional.of(new ExternalHandlers.Options(Path.of(dir.strip()), settings));
  }

  /** The safeguards the flags ask for. */
  Safeguards safeguards() {
    return new Safeguards(
        classDomains.domains(),
        allowReservedBrokerEnv,
        metricsBindAddress,
        new SlotLimits(maxSlotsPerConfiguration, maxSlotsPerAgent),
        new HandlerLimits(
            handlerCallTimeout,
            handlerStrandedThreads,
            disableHandlers == null
                ? java.util.Set.of()
                : disableHandlers.stream()
                    .map(String::strip)
                    .filter(n -> !n.isEmpty())
                    .collect(java.util.stream.Collectors.toSet())),
        new ContainerPaths(
            allowHostMountPrefixes == null
                ? List.of()
                : allowHostMountPrefixes.stream()
                    .filter(p -> !p.isBlank())
                    .map(String::strip)
                    .toList()));
  }

  @Override
  public Integer call() throws Exception {
    if (cdiDir != null && !cdi) {
      System.err.println("jakri-agent: --cdi-dir needs --cdi");
      return 2;
    }
    logFormat.apply(Optional.of(common.nodeName()));
    for (String line : akriEnvUsed()) {
      LoggerFactory.getLogger(Main.class).info("{}", line);
    }
    OutOfMemoryExit.install();
    if (maxSlotsPerConfiguration < 1 || maxSlotsPerAgent < 1) {
      System.err.println(
          "jakri-agent: --max-slots-per-configuration and --max-slots-per-agent must be at least"
              + " 1");
      return 2;
    }
    if (handlerCallTimeout.isNegative()
        || handlerCallTimeout.isZero()
        || handlerStrandedThreads < 1) {
      System.err.println(
          "jakri-agent: --handler-call-timeout must be positive and --handler-stranded-threads at"
              + " least 1");
      return 2;
    }
    for (String prefix :
        allowHostMountPrefixes == null ? List.<String>of() : allowHostMountPrefixes) {
      Optional<String> problem = ContainerPaths.formProblem(prefix.strip());
      if (!prefix.isBlank() && problem.isPresent()) {
        System.err.println(
            "jakri-agent: --allow-host-mount-prefix "
                + io.jakri.logging.LogText.quote(prefix)
                + " "
                + problem.get()
                + " (an absolute, normalised path is needed)");
        return 2;
      }
    }
    int port = metricsPort == null ? -1 : metricsPort;
    if (!standalone) {
      if (config != null) {
        System.err.println("jakri-agent: --config needs --standalone");
        return 2;
      }
      List<String> watched = new ArrayList<>();
      for (String ns : namespaces) {
        if (!ns.isBlank() && !watched.contains(ns.strip())) {
          watched.add(ns.strip());
        }
      }
      if (namespace != null && !namespace.isBlank()) {
        if (!watched.isEmpty() && !watched.equals(List.of(namespace.strip()))) {
          System.err.println(
              "jakri-agent: --namespace and --namespaces disagree; give one of them");
          return 2;
        }
        watched = List.of(namespace.strip());
      }
      AgentOptions clusterOptions =
          common
              .options(false, Optional.empty(), emulateKubelet)
              .inCluster(new WatchedNamespaces(watched), tidyNode)
              .withLabelNode(labelNode)
              .withMetricsPort(port)
              .withSafeguards(safeguards())
              .withExternalHandlers(externalHandlers())
              .withCdi(cdiDir());
      return runUntilSignal(
          clusterOptions.withDra(
              draOptions(
                  emulateKubelet
                      ? Optional.of(clusterOptions.devicePluginDir())
                      : Optional.empty())));
    }
    if (config == null) {
      System.err.println("jakri-agent: --standalone needs --config FILE|DIR");
      return 2;
    }
    AgentOptions options =
        common
            .options(true, Optional.of(config), emulateKubelet)
            .withMetricsPort(port)
            .withSafeguards(safeguards())
            .withExternalHandlers(externalHandlers())
            .withCdi(cdiDir());
    options =
        options.withDra(
            draOptions(emulateKubelet ? Optional.of(options.devicePluginDir()) : Optional.empty()));
    return runUntilSignal(options);
  }

  int runUntilSignal(AgentOptions options) throws Exception {
    Optional<String> tooLong = SocketNames.tooLong(options.devicePluginDir());
    if (tooLong.isPresent()) {
      System.err.println("jakri-agent: " + tooLong.get() + " (--device-plugin-dir)");
      common.temporaryDir.ifPresent(Main::removeTemporaryDir);
      temporaryCdiDir.ifPresent(Main::deleteTree);
      return 2;
    }
    CountDownLatch stop = new CountDownLatch(1);
    // SIGTERM and SIGINT end streams, remove sockets and exit 0 (not the JVM's default 143).
    Signal.handle(new Signal("TERM"), s -> stop.countDown());
    Signal.handle(new Signal("INT"), s -> stop.countDown());
    try (Agent agent = Agent.start(options)) {
      stop.await();
    } catch (EmulatorStartException e) {
      System.err.println("jakri-agent: --emulate-kubelet: " + e.getMessage());
      return 1;
    } catch (DirectoryInUseException e) {
      System.err.println(
          "jakri-agent: --discovery-handlers-dir: "
              + e.getMessage()
              + "; with --emulate-kubelet give it a directory of its own, none, or no"
              + " directory for a temporary one");
      return 1;
    } catch (java.net.BindException e) {
      // Only the metrics endpoint listens on a TCP port; its message names the address.
      spec.commandLine().getErr().println("jakri-agent: --metrics-port: " + e.getMessage());
      return 1;
    } finally {
      common.temporaryDir.ifPresent(Main::removeTemporaryDir);
      // The agent removed its specs when it stopped; what is left here is the empty directory.
      temporaryCdiDir.ifPresent(Main::deleteTree);
      // Likewise its registration socket and saved registrations.
      temporaryDiscoveryHandlersDir.ifPresent(Main::deleteTree);
    }
    return 0;
  }

  /**
   * Removes the emulator's temporary directory once the agent stopped: the emulator's checkpoint,
   * then the directory if nothing else is left in it (the agent and the emulator removed their
   * sockets).
   */
  static void removeTemporaryDir(Path dir) {
    try {
      Files.deleteIfExists(dir.resolve(KubeletEmulator.CHECKPOINT_FILE));
      Files.deleteIfExists(dir.resolve(KubeletEmulator.CHECKPOINT_FILE + ".tmp"));
      // --dra with the emulator: its directories, emptied by the agent.
      Files.deleteIfExists(dir.resolve(DRA_EMULATED_PLUGINS).resolve("akri.sh"));
      Files.deleteIfExists(dir.resolve(DRA_EMULATED_PLUGINS));
      Files.deleteIfExists(dir.resolve(DRA_EMULATED_REGISTRY));
      Files.deleteIfExists(dir);
    } catch (IOException e) {
      LoggerFactory.getLogger(Main.class).warn("kept {}: {}", dir, e.toString());
    }
  }

  /**
   * A new directory {@code <prefix><8 hex digits>} in {@code java.io.tmpdir}, owner-only: eleven
   * bytes shorter than {@link Files#createTempDirectory}'s name, which matters where sockets go (a
   * Unix socket path has at most 107 bytes).
   */
  static Path shortTempDirectory(String prefix) throws IOException {
    Path base = Path.of(System.getProperty("java.io.tmpdir"));
    java.security.SecureRandom random = new java.security.SecureRandom();
    java.nio.file.attribute.FileAttribute<?> ownerOnly =
        java.nio.file.attribute.PosixFilePermissions.asFileAttribute(
            java.nio.file.attribute.PosixFilePermissions.fromString("rwx------"));
    while (true) {
      Path dir = base.resolve(prefix + java.util.HexFormat.of().toHexDigits(random.nextInt()));
      try {
        return Files.createDirectory(dir, ownerOnly);
      } catch (java.nio.file.FileAlreadyExistsException taken) {
        // Another name.
      }
    }
  }

  /** {@code plugins/} next to the running agent jar, else {@code ./plugins}. */
  static Path defaultPluginsDir() {
    return io.jakri.agent.discovery.PluginHandlerRegistry.besideJar(Main.class);
  }

  /** A TCP port: 0 (any free port) to 65535. */
  static final class PortConverter implements CommandLine.ITypeConverter<Integer> {
    @Override
    public Integer convert(String value) {
      int port;
      try {
        port = Integer.parseInt(value.strip());
      } catch (NumberFormatException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a port (use 0 to 65535; 0 for any free port)");
      }
      if (port < 0 || port > 65535) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a port (use 0 to 65535; 0 for any free port)");
      }
      return port;
    }
  }

  /** Prints the agent version. */
  public static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"jakri-agent " + Agent.VERSION};
    }
  }

  /** Deletes {@code dir} and everything in it, best effort (a file that resists stays). */
  static void deleteTree(Path dir) {
    if (!Files.exists(dir, java.nio.file.LinkOption.NOFOLLOW_LINKS)) {
      return;
    }
    try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
      paths
          .sorted(java.util.Comparator.reverseOrder())
          .forEach(
              path -> {
                try {
                  Files.deleteIfExists(path);
                } catch (java.io.IOException e) {
                  // Best effort: a leftover in the temp dir is not worth failing the demo for.
                }
              });
    } catch (java.io.IOException | java.io.UncheckedIOException e) {
      // Same: best effort.
    }
  }
}
