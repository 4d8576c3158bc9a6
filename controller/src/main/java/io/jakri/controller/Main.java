package io.jakri.controller;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.jakri.controller.admission.WebhookTls;
import io.jakri.controller.metrics.ControllerMetrics;
import io.jakri.controller.metrics.MetricsServer;
import io.jakri.logging.CommonPool;
import io.jakri.logging.DurationText;
import io.jakri.logging.EnvDefaults;
import io.jakri.logging.LogFormat;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.UnaryOperator;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

/**
 * {@code java -jar jakri-controller.jar}: runs the controller until SIGTERM/SIGINT, then exits 0.
 * Each flag also reads {@code JAKRI_<FLAG>} from the environment (e.g. {@code JAKRI_NAMESPACE}).
 */
@Command(
    name = "jakri-controller",
    mixinStandardHelpOptions = true,
    version = "jakri-controller " + Main.VERSION,
    description = "Deploys broker Pods/Jobs and Services for jakri/Akri Instances.",
    defaultValueProvider = EnvDefaults.class)
public final class Main implements Callable<Integer> {

  /** The controller's version, as {@code --version} prints it (the agent's is the same). */
  public static final String VERSION = "0.1.0";

  @Option(
      names = "--namespace",
      description =
          "Serve only this namespace (env JAKRI_NAMESPACE; the same as --namespaces with one"
              + " name).")
  String namespace;

  @Option(
      names = "--namespaces",
      split = ",",
      paramLabel = "NS[,NS...]",
      description =
          "Serve only these namespaces (env JAKRI_NAMESPACES; default: every namespace, as"
              + " Akri). Brokers and Services go to their Instance's namespace.")
  List<String> namespaces = new ArrayList<>();

  @Option(
      names = "--pending-grace",
      defaultValue = "5m",
      converter = DurationText.Converter.class,
      description = "How long a broker Pod may stay Pending before it is replaced (default 5m).")
  Duration pendingGrace;

  @Option(
      names = "--node-grace",
      defaultValue = "5m",
      converter = DurationText.Converter.class,
      description = "How long a NotReady node stays in Instances (default 5m).")
  Duration nodeGrace;

  @Option(
      names = "--resync",
      defaultValue = "5m",
      converter = DurationText.Converter.class,
      description = "How often everything is reconciled again (default 5m).")
  Duration resync;

  @Option(
      names = "--workers",
      defaultValue = "4",
      description = "Keys reconciled in parallel (default 4).")
  int workers;

  @Option(
      names = "--metrics-port",
      defaultValue = "0",
      description =
          "Serve /metrics (Prometheus), /healthz and /readyz on this port (env JAKRI_METRICS_PORT,"
              + " or Akri's METRICS_PORT; 0, the default: off).")
  int metricsPort;

  @Option(
      names = "--webhook-port",
      defaultValue = "0",
      description =
          "Serve the validating admission webhook for Configurations (HTTPS, POST /validate) on"
              + " this port: the same checks as the agent's validate command (0, the default:"
              + " off; the chart: 8443).")
  int webhookPort;

  @Option(
      names = "--webhook-names",
      split = ",",
      paramLabel = "NAME[,NAME...]",
      description =
          "DNS names (and IP addresses) of the webhook's serving certificate, signed by a CA the"
              + " controller makes at start (the chart: the webhook Service's names). Not with"
              + " --webhook-cert-dir.")
  List<String> webhookNames = new ArrayList<>();

  @Option(
      names = "--webhook-configuration",
      description =
          "The ValidatingWebhookConfiguration whose caBundle the controller sets to its CA (and"
              + " keeps so); none by default.")
  String webhookConfiguration;

  @Option(
      names = "--webhook-cert-dir",
      description =
          "Serve tls.crt and tls.key from this directory (cert-manager's Secret) instead of a"
              + " certificate of the controller's own CA; the caBundle is then cert-manager's.")
  Path webhookCertDir;

  @Option(
      names = "--instance-object-resources",
      description =
          "Kinds that a Configuration's spec.instanceObjects may create per Instance, named as RBAC"
              + " names them: resource[.group], comma-separated (configmaps,deployments.apps);"
              + " none by default. The controller's RBAC must allow them.")
  String instanceObjectResources;

  @Option(
      names = "--plugins-dir",
      description =
          "Handler plugins whose checks of discoveryDetails the webhook runs (default: plugins"
              + " next to the jar).")
  Path pluginsDir;

  @Option(
      names = "--log-format",
      converter = LogFormat.Converter.class,
      defaultValue = "text",
      description =
          "Log format: text or json (one JSON object per line), both on stdout (env"
              + " JAKRI_LOG_FORMAT; default text).")
  LogFormat logFormat;

  /**
   * Akri's controller's env vars of the same settings, read when jakri's own {@code JAKRI_...} is
   * unset: flag to Akri's name.
   */
  static final Map<String, String> AKRI_ENV = Map.of("--metrics-port", "METRICS_PORT");

  /** Where flags not given take their defaults from; set by {@link #commandLine}. */
  private EnvDefaults env = new EnvDefaults();

  @CommandLine.Spec CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    CommonPool.size();
    System.exit(commandLine(System::getenv).execute(args));
  }

  /** The command line reading {@code environment} (the process's, or a test's map). */
  static CommandLine commandLine(UnaryOperator<String> environment) {
    Main main = new Main();
    main.env = new EnvDefaults(environment, AKRI_ENV);
    CommandLine cmd = new CommandLine(main).setCaseInsensitiveEnumValuesAllowed(true);
    cmd.setDefaultValueProvider(main.env);
    return cmd;
  }

  /** One line per Akri env var a flag not given took its value from (see {@link #AKRI_ENV}). */
  List<String> akriEnvUsed() {
    return spec == null || spec.commandLine().getParseResult() == null
        ? List.of()
        : env.akriNamesUsed(spec.commandLine().getParseResult());
  }

  /**
   * How often the API client itself retries a failed request (connection refused, 5xx) before the
   * controller's own backoff: an informer's failed list is logged and retried on the informer's
   * schedule, a failed write by the work queue. fabric8's default of ten retries per request held
   * each attempt for about 20 s before anything was logged.
   */
  static final int API_RETRIES = 2;

  /** The API client's first retry interval in milliseconds (it doubles). */
  static final int API_RETRY_INTERVAL_MS = 100;

  /**
   * While the caches have not listed, how often a WARN line says the controller is still not ready
   * and why (failed lists and watches log their own line per attempt).
   */
  static final Duration NOT_READY_NOTICE =
      Duration.ofSeconds(Long.getLong("jakri.controller.notReadyNoticeSeconds", 30));

  @Override
  public Integer call() throws Exception {
    logFormat.apply(Optional.empty());
    // Looked up after the format is applied: the first lookup would initialise logback.
    Logger log = LoggerFactory.getLogger(Main.class);
    for (String line : akriEnvUsed()) {
      log.info("{}", line);
    }
    List<String> served = new ArrayList<>();
    for (String ns : namespaces == null ? List.<String>of() : namespaces) {
      if (ns != null && !ns.isBlank() && !served.contains(ns.strip())) {
        served.add(ns.strip());
      }
    }
    if (namespace != null && !namespace.isBlank()) {
      if (!served.isEmpty() && !served.equals(List.of(namespace.strip()))) {
        System.err.println(
            "jakri-controller: --namespace and --namespaces disagree; give one of them");
        return 2;
      }
      served = List.of(namespace.strip());
    }
    String where =
        served.isEmpty() ? "all namespaces" : "namespace(s) " + String.join(", ", served);
    List<io.jakri.controller.objects.AllowedResource> objectResources;
    try {
      objectResources =
          io.jakri.controller.objects.AllowedResource.parseList(
              Optional.ofNullable(instanceObjectResources).orElse(""));
    } catch (IllegalArgumentException e) {
      System.err.println("jakri-controller: --instance-object-resources: " + e.getMessage());
      return 2;
    }
    ControllerOptions defaults = ControllerOptions.defaults("default");
    ControllerOptions options =
        new ControllerOptions(
            "default",
            pendingGrace,
            nodeGrace,
            resync,
            workers,
            defaults.retryBase(),
            defaults.retryMax(),
            objectResources);
    ApiCalls calls = new ApiCalls();
    CountDownLatch stop = new CountDownLatch(1);
    AtomicInteger exitCode = new AtomicInteger();
    // SIGTERM (kubelet stopping the Pod) and SIGINT end the run normally: exit status 0, not 143.
    for (String signal : new String[] {"TERM", "INT"}) {
      sun.misc.Signal.handle(new sun.misc.Signal(signal), s -> stop.countDown());
    }
    // Each served namespace runs its own worker loops.
    ExecutorService pool = Executors.newCachedThreadPool();
    ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
    MetricsServer metrics = null;
    Optional<WebhookTls> tls;
    try {
      tls = webhookTls();
    } catch (IOException | IllegalArgumentException e) {
      System.err.println("jakri-controller: " + e.getMessage());
      return 2;
    }
    io.jakri.controller.admission.Admission admission = null;
    try (KubernetesClient client =
            new KubernetesClientBuilder()
                .withConfig(
                    new ConfigBuilder(Config.autoConfigure(null))
                        .withRequestRetryBackoffLimit(API_RETRIES)
                        .withRequestRetryBackoffInterval(API_RETRY_INTERVAL_MS)
                        .build())
                .withHttpClientBuilderConsumer(
                    b -> b.addOrReplaceInterceptor("jakri-api-calls", calls.interceptor()))
                .build();
        AllNamespaces controller =
            new AllNamespaces(
                client,
                options,
                served,
                Clock.systemUTC(),
                pool,
                scheduler,
                RandomGenerator.getDefault())) {
      log.info(
          "API server {} ({}); listing Configurations, Instances, Nodes and brokers",
          client.getMasterUrl(),
          where);
      if (metricsPort > 0) {
        // Up before the caches sync, so /readyz can say why the controller is not ready yet.
        metrics =
            new MetricsServer(
                new InetSocketAddress(metricsPort),
                new ControllerMetrics(controller::managedPods),
                controller::notReady,
                Executors.newSingleThreadExecutor());
        metrics.start();
        log.info("metrics on port {}", metrics.port());
      }
      if (tls.isPresent()) {
        // Admission does not need the caches: served from the start.
        admission =
            io.jakri.controller.admission.Admission.start(
                webhookPort,
                tls.get(),
                pluginsDir(),
                client,
                webhookConfiguration,
                controller.kinds(),
                scheduler);
        List<String> jars = admission.review().pluginJars();
        log.info(
            "admission webhook on port {} (POST /validate); discoveryDetails checked by the handler"
                + " plugins in {} ({}), loaded at the first review",
            admission.server().port(),
            pluginsDir(),
            jars.isEmpty() ? "none" : String.join(", ", jars));
      }
      long since = System.nanoTime();
      var notice =
          scheduler.scheduleWithFixedDelay(
              () ->
                  controller
                      .notReady()
                      .ifPresent(
                          why ->
                              log.warn(
                                  "not ready after {}s, still trying: {}",
                                  Duration.ofNanos(System.nanoTime() - since).toSeconds(),
                                  why)),
              NOT_READY_NOTICE.toMillis(),
              NOT_READY_NOTICE.toMillis(),
              TimeUnit.MILLISECONDS);
      controller
          .startAsync()
          .whenComplete(
              (v, e) -> {
                notice.cancel(false);
                // Stopping before the caches synced ends the informers' start too: not an error.
                if (e != null && stop.getCount() > 0) {
                  log.error(
                      "the controller could not start: {}; exiting",
                      io.jakri.logging.ApiFailure.describe(
                          String.valueOf(client.getMasterUrl()), e));
                  exitCode.set(1);
                  stop.countDown();
                }
              });
      stop.await();
      notice.cancel(false);
      log.info("stopping; {} API request(s) made: {}", calls.total(), calls.snapshot());
    } finally {
      if (admission != null) {
        admission.close();
      }
      if (metrics != null) {
        metrics.close();
      }
      pool.shutdownNow();
      scheduler.shutdownNow();
      pool.awaitTermination(5, TimeUnit.SECONDS);
    }
    return exitCode.get();
  }

  /** The webhook's certificate: none when it is off; made or read as the flags say. */
  private Optional<WebhookTls> webhookTls() throws IOException {
    if (webhookPort <= 0) {
      return Optional.empty();
    }
    if (webhookPort > 65535) {
      throw new IllegalArgumentException("--webhook-port must be 1 to 65535 (0: off)");
    }
    List<String> names =
        webhookNames == null
            ? List.of()
            : webhookNames.stream().map(String::strip).filter(n -> !n.isEmpty()).toList();
    if (webhookCertDir != null) {
      if (!names.isEmpty()) {
        throw new IllegalArgumentException(
            "--webhook-names and --webhook-cert-dir disagree: the names come from the certificate"
                + " in --webhook-cert-dir; give one of them");
      }
      return Optional.of(
          WebhookTls.read(webhookCertDir.resolve("tls.crt"), webhookCertDir.resolve("tls.key")));
    }
    if (names.isEmpty()) {
      throw new IllegalArgumentException(
          "--webhook-port needs --webhook-names (the names the API server calls the webhook by,"
              + " e.g. jakri-webhook.akri.svc) or --webhook-cert-dir");
    }
    return Optional.of(WebhookTls.generate(names));
  }

  private Path pluginsDir() {
    return pluginsDir != null
        ? pluginsDir
        : io.jakri.agent.discovery.PluginHandlerRegistry.besideJar(Main.class);
  }
}
