package io.jakri.agent;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import ch.qos.logback.core.joran.util.ConfigurationWatchListUtil;
import io.jakri.agent.demo.Demo;
import io.jakri.agent.validate.Validator;
import java.io.PrintWriter;
import java.net.InetAddress;
import java.net.URISyntaxException;
import java.net.URL;
import java.net.UnknownHostException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import sun.misc.Signal;

/**
 * The agent's command line: run the agent, {@code demo}, {@code validate}. Every flag also reads an
 * env var ({@code --node-name} from {@code JAKRI_NODE_NAME} or {@code NODE_NAME}, {@code
 * --device-plugin-dir} from {@code JAKRI_DEVICE_PLUGIN_DIR}, ...). Only this class exits the
 * process.
 */
@Command(
    name = "jakri-agent",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    description = "jakri node agent: discovers devices and serves them to the kubelet.",
    defaultValueProvider = Main.EnvDefaults.class,
    subcommands = {Main.DemoCommand.class, Main.ValidateCommand.class})
public final class Main implements Callable<Integer> {

  @CommandLine.Mixin Common common = new Common();

  @Option(
      names = "--standalone",
      description = "Read Configurations from --config instead of the API server.")
  boolean standalone;

  @Option(names = "--config", description = "Configuration YAML file or directory (standalone).")
  Path config;

  @Option(
      names = "--emulate-kubelet",
      description = "Serve a built-in kubelet emulator on kubelet.sock in the device-plugin dir.")
  boolean emulateKubelet;

  public static void main(String[] args) {
    int code = new CommandLine(new Main()).setCaseInsensitiveEnumValuesAllowed(true).execute(args);
    System.exit(code);
  }

  @Option(
      names = "--namespace",
      description =
          "Cluster mode: namespace of the Configurations and Instances (env JAKRI_NAMESPACE;"
              + " default ${DEFAULT-VALUE}).")
  String namespace = AgentOptions.DEFAULT_NAMESPACE;

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
      names = "--metrics-port",
      description =
          "Serve /metrics (Prometheus), /healthz and /readyz on this port (env"
              + " JAKRI_METRICS_PORT; default: off).")
  Integer metricsPort;

  @Option(
      names = "--log-format",
      converter = LogFormat.Converter.class,
      description =
          "Log format: text (lines on stderr) or json (one JSON object per line on stdout)"
              + " (env JAKRI_LOG_FORMAT; default text).")
  LogFormat logFormat = LogFormat.TEXT;

  @Override
  public Integer call() throws Exception {
    logFormat.apply(common.nodeName());
    int port = metricsPort == null ? -1 : metricsPort;
    if (!standalone) {
      if (config != null) {
        System.err.println("jakri-agent: --config needs --standalone");
        return 2;
      }
      return runUntilSignal(
          common
              .options(false, Optional.empty(), emulateKubelet)
              .inCluster(namespace, tidyNode)
              .withMetricsPort(port));
    }
    if (config == null) {
      System.err.println("jakri-agent: --standalone needs --config FILE|DIR");
      return 2;
    }
    AgentOptions options =
        common.options(true, Optional.of(config), emulateKubelet).withMetricsPort(port);
    return runUntilSignal(options);
  }

  static int runUntilSignal(AgentOptions options) throws Exception {
    CountDownLatch stop = new CountDownLatch(1);
    // SIGTERM and SIGINT end streams, remove sockets and exit 0 (not the JVM's default 143).
    Signal.handle(new Signal("TERM"), s -> stop.countDown());
    Signal.handle(new Signal("INT"), s -> stop.countDown());
    try (Agent agent = Agent.start(options)) {
      stop.await();
    }
    return 0;
  }

  /** Flags every command shares. */
  static final class Common {
    @Option(
        names = "--node-name",
        description = "This node's name (env JAKRI_NODE_NAME or NODE_NAME; default: host name).")
    String nodeName;

    @Option(
        names = "--device-plugin-dir",
        description = "Kubelet device-plugin directory (default ${DEFAULT-VALUE}).")
    Path devicePluginDir = Path.of("/var/lib/kubelet/device-plugins");

    @Option(
        names = "--pod-resources-socket",
        description = "Kubelet PodResources socket (default ${DEFAULT-VALUE}).")
    Path podResourcesSocket = Path.of("/var/lib/kubelet/pod-resources/kubelet.sock");

    @Option(
        names = "--plugins-dir",
        description = "Directory of handler plugin jars (default: plugins/ next to the agent jar).")
    Path pluginsDir;

    @Option(
        names = "--offline-grace",
        description =
            "How long a vanished device stays, unhealthy, before its Instance goes, e.g. 60s, 2m"
                + " (default ${DEFAULT-VALUE}).",
        converter = DurationConverter.class)
    Duration offlineGrace = Duration.ofSeconds(60);

    @Option(
        names = "--reclaim-grace",
        description =
            "How long a slot this node holds must be unused by every container (kubelet"
                + " PodResources) before it is freed, e.g. 20s (default ${DEFAULT-VALUE}).",
        converter = DurationConverter.class)
    Duration reclaimGrace = Duration.ofSeconds(20);

    AgentOptions options(boolean standalone, Optional<Path> config, boolean emulate) {
      return new AgentOptions(
          nodeName(),
          standalone,
          config,
          emulate,
          devicePluginDir,
          podResourcesSocket,
          pluginsDir == null ? defaultPluginsDir() : pluginsDir,
          offlineGrace,
          reclaimGrace);
    }

    String nodeName() {
      if (nodeName != null && !nodeName.isBlank()) {
        return nodeName;
      }
      String env = System.getenv("NODE_NAME");
      if (env != null && !env.isBlank()) {
        return env;
      }
      try {
        return InetAddress.getLocalHost().getHostName().toLowerCase(Locale.ROOT);
      } catch (UnknownHostException e) {
        return "localhost";
      }
    }
  }

  /** {@code plugins/} next to the running agent jar, else {@code ./plugins}. */
  static Path defaultPluginsDir() {
    try {
      Path jar = Path.of(Main.class.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(jar)) {
        return jar.getParent().resolve("plugins");
      }
    } catch (URISyntaxException | RuntimeException e) {
      // fall through to the working directory
    }
    return Path.of("plugins");
  }

  /**
   * The {@code --log-format} choices. {@code logback.xml} includes {@code logback-<format>.xml} for
   * the format {@code JAKRI_LOG_FORMAT} names (default {@code text}); logback reads that when it
   * initialises, which may be before the flag is parsed, so {@link #apply} configures it again when
   * the flag chose another format.
   */
  public enum LogFormat {
    /** {@code HH:mm:ss.SSS LEVEL [thread] Logger - message} lines on stderr. */
    TEXT,
    /**
     * One JSON object per line on stdout: {@code timestamp}, {@code level}, {@code logger}, {@code
     * thread}, {@code message}, MDC entries and SLF4J key-values as fields, {@code stack_trace}.
     */
    JSON;

    /** The logback variable (system property, context property or env var) naming the appender. */
    public static final String VARIABLE = "JAKRI_LOG_FORMAT";

    /** The logback context property the JSON lines' {@code node} field comes from. */
    public static final String NODE_PROPERTY = "JAKRI_NODE";

    /** Reads {@code text} or {@code json}, in any case, for picocli. */
    public static final class Converter implements CommandLine.ITypeConverter<LogFormat> {
      @Override
      public LogFormat convert(String value) {
        for (LogFormat format : values()) {
          if (format.appenderName().equalsIgnoreCase(value.strip())) {
            return format;
          }
        }
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a log format (use text or json)");
      }
    }

    /** The appender's name in {@code logback.xml}. */
    public String appenderName() {
      return name().toLowerCase(Locale.ROOT);
    }

    /**
     * Makes logback log in this format (initialising it if nothing did yet). Call from the
     * composition root before anything logs; not thread-safe against concurrent logging.
     */
    void apply() {
      if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
        apply(context);
      }
    }

    /** {@link #apply()}, with every JSON line naming {@code node} in its {@code node} field. */
    void apply(String node) {
      if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
        apply(context, node);
      }
    }

    /**
     * Configures {@code context} again from the shipped {@code logback.xml}, with {@link #VARIABLE}
     * set to this format, when that file configured it and its root logger does not write through
     * this format's appender. Does nothing otherwise (idempotent; a custom {@code
     * -Dlogback.configurationFile} is left alone). Returns whether it reconfigured.
     */
    boolean apply(LoggerContext context) {
      return apply(context, "");
    }

    /**
     * {@link #apply(LoggerContext)}, also configuring again when a JSON log does not yet name
     * {@code node} (empty: no node field value).
     */
    boolean apply(LoggerContext context, String node) {
      ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
      URL config = ConfigurationWatchListUtil.getMainWatchURL(context);
      URL shipped = Main.class.getClassLoader().getResource("logback.xml");
      boolean nodeKnown = this == TEXT || node.equals(context.getProperty(NODE_PROPERTY));
      if (config == null
          || !config.toString().equals(String.valueOf(shipped))
          || (root.getAppender(appenderName()) != null && nodeKnown)) {
        return false;
      }
      context.reset();
      context.putProperty(VARIABLE, appenderName());
      context.putProperty(NODE_PROPERTY, node);
      JoranConfigurator configurator = new JoranConfigurator();
      configurator.setContext(context);
      try {
        configurator.doConfigure(config);
      } catch (JoranException e) {
        // Logback keeps the failure in its status list; the agent runs on, logging or not.
        return false;
      }
      return true;
    }
  }

  /** Parses {@code 60s}, {@code 2m}, {@code 1h}, {@code 500ms} or ISO-8601 {@code PT1M}. */
  static final class DurationConverter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      String v = value.strip().toLowerCase(Locale.ROOT);
      try {
        if (v.startsWith("pt")) {
          return Duration.parse(v.toUpperCase(Locale.ROOT));
        }
        if (v.endsWith("ms")) {
          return Duration.ofMillis(Long.parseLong(v.substring(0, v.length() - 2)));
        }
        long n = Long.parseLong(v.substring(0, v.length() - 1));
        switch (v.charAt(v.length() - 1)) {
          case 's':
            return Duration.ofSeconds(n);
          case 'm':
            return Duration.ofMinutes(n);
          case 'h':
            return Duration.ofHours(n);
          default:
            return Duration.ofSeconds(Long.parseLong(v));
        }
      } catch (RuntimeException e) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is not a duration (use e.g. 60s, 2m, 500ms)");
      }
    }
  }

  /** Flag defaults from env vars: {@code --foo-bar} reads {@code JAKRI_FOO_BAR}. */
  public static final class EnvDefaults implements CommandLine.IDefaultValueProvider {
    @Override
    public String defaultValue(CommandLine.Model.ArgSpec argSpec) {
      if (!(argSpec instanceof CommandLine.Model.OptionSpec option)) {
        return null;
      }
      String name = option.longestName().replaceFirst("^--", "");
      String env = "JAKRI_" + name.toUpperCase(Locale.ROOT).replace('-', '_');
      String value = System.getenv(env);
      return value == null || value.isEmpty() ? null : value;
    }
  }

  /** Prints the agent version. */
  public static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      return new String[] {"jakri-agent " + Agent.VERSION};
    }
  }

  @Command(
      name = "demo",
      mixinStandardHelpOptions = true,
      defaultValueProvider = EnvDefaults.class,
      description =
          "Standalone agent + kubelet emulator + bundled example Configurations: prints the node's"
              + " capacity and what a pod receives, then follows live updates until Ctrl-C.")
  static final class DemoCommand implements Callable<Integer> {
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
        converter = DurationConverter.class,
        description = "Offline grace period (default ${DEFAULT-VALUE}).")
    Duration offlineGrace = Duration.ofSeconds(60);

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

    @Override
    public Integer call() throws Exception {
      // The demo's output is the report on stdout; keep the log to warnings unless asked.
      if (System.getenv("JAKRI_LOG_LEVEL") == null) {
        System.setProperty("JAKRI_LOG_LEVEL", "WARN");
      }
      if (System.getenv("JAKRI_EMULATOR_LOG_LEVEL") == null) {
        System.setProperty("JAKRI_EMULATOR_LOG_LEVEL", "ERROR");
      }
      logFormat.apply(nodeName);
      Path work = workDir != null ? workDir : Files.createTempDirectory("jakri-demo-");
      Path configPath = config != null ? config : Demo.writeBundledExamples(work.resolve("config"));
      AgentOptions options =
          new AgentOptions(
              nodeName,
              true,
              Optional.of(configPath),
              true,
              work.resolve("device-plugins"),
              work.resolve("pod-resources").resolve("kubelet.sock"),
              pluginsDir == null ? defaultPluginsDir() : pluginsDir,
              offlineGrace);
      return new Demo(options, once, new PrintWriter(System.out, true)).run();
    }
  }

  @Command(
      name = "validate",
      mixinStandardHelpOptions = true,
      defaultValueProvider = EnvDefaults.class,
      description =
          "Checks Configuration files offline: structure, names, YAML limits and, when the"
              + " handler is installed, its discoveryDetails. Problems on stderr (exit 1),"
              + " warnings and verdicts on stdout; warnings alone exit 0.")
  static final class ValidateCommand implements Callable<Integer> {
    @Parameters(arity = "1..*", paramLabel = "FILE", description = "Configuration YAML files.")
    List<Path> files;

    @Option(
        names = "--plugins-dir",
        description = "Handler plugins used to check discoveryDetails (default: next to the jar).")
    Path pluginsDir;

    @Override
    public Integer call() {
      // stderr carries the problems: keep the agent's INFO lines (plugins loaded) out of it.
      if (System.getenv("JAKRI_LOG_LEVEL") == null) {
        System.setProperty("JAKRI_LOG_LEVEL", "WARN");
      }
      return new Validator(
              pluginsDir == null ? defaultPluginsDir() : pluginsDir,
              new PrintWriter(System.out, true),
              new PrintWriter(System.err, true))
          .validate(files);
    }
  }
}
