package io.jakri.bench;

import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.dataformat.yaml.YAMLFactory;
import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.testing.kube.FreePorts;
import io.jakri.testing.kube.KubeBinaries;
import io.jakri.testing.kube.RealApiServer;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * The footprint as users run jakri (issue 29): agent and controller in cluster mode against a real
 * kube-apiserver (RBAC on, each on its own ServiceAccount token from the shipped RBAC manifests),
 * started as the image starts them ({@code java -XX:+ExitOnOutOfMemoryError -cp <jar> <main>}, the
 * bundled plugins) with the chart's default {@code javaToolOptions} in {@code JAVA_TOOL_OPTIONS}
 * and its default arguments, and with the chart's resource limits standing in for the container's
 * cgroup: {@code -XX:MaxRAM=<memory limit>} (the JVM sizes its heap from the limit) and {@code
 * -XX:ActiveProcessorCount=<CPU limit rounded up>} (what the JVM counts under a CPU quota).
 * Everything is read from {@code charts/jakri/values.yaml}, so the figures follow the chart. The
 * runtime is the image's: the JRE the images module linked for this machine's architecture (with
 * its class-data archive) unless {@code --java} names another, and each component maps an AppCDS
 * archive dumped from the class list the image's archive was dumped from ({@code
 * images/target/cds/<component>.classlist}), for the jar path the bench runs ({@code --no-cds}: no
 * application archive). The floors get AppCDS archives of their own, each trained on one unmeasured
 * run of the floor program.
 *
 * <p>Each figure has a floor from the same run, with the same runtime, flags and limits: {@link
 * BareCluster}, one client and one informer per kind the component watches, plus (as the agent) N
 * bare device-plugin servers.
 */
final class FootprintBench {

  static final String NS = "akri";
  private static final String NODE = "bench-node";
  private static final String CONTROLLER_NODE = "bench-controller-node";
  static final String WEBHOOK = "jakri-webhook";
  private static final Duration READY = Duration.ofMinutes(5);
  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private final Bench.Options options;
  private final Path work;
  private final BiConsumer<String, Double> add;
  private final Path repo;

  /** Per floor role, its trained AppCDS archive (made once per bench run). */
  private final Map<String, Path> floorArchives = new HashMap<>();

  /** Each component's AppCDS archive, dumped once per bench (its jar's path does not change). */
  private final Map<String, Path> appArchives = new HashMap<>();

  FootprintBench(Bench.Options options, Path work, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.add = add;
    this.repo = Path.of("").toAbsolutePath(); // run.sh runs from the repository's root
  }

  /** The chart's default JVM set-up of one component ({@code agent} or {@code controller}). */
  record ChartJvm(String javaToolOptions, String memoryLimit, String cpuLimit) {

    /** The image's entrypoint flag and the container limits as the JVM sees them. */
    List<String> flags() {
      return List.of(
          "-XX:+ExitOnOutOfMemoryError",
          "-XX:MaxRAM=" + mebibytes(memoryLimit) + "m",
          "-XX:ActiveProcessorCount=" + processors(cpuLimit));
    }

    /**
     * The chart's environment plus {@code extra} ({@code --agent-env}): a {@code JAVA_TOOL_OPTIONS}
     * there is appended to the chart's (to try a flag, or to track native memory).
     */
    Map<String, String> env(Map<String, String> extra) {
      Map<String, String> env = new LinkedHashMap<>(extra);
      String options =
          (javaToolOptions + " " + extra.getOrDefault("JAVA_TOOL_OPTIONS", "")).strip();
      if (!options.isEmpty()) {
        env.put("JAVA_TOOL_OPTIONS", options);
      }
      return env;
    }

    static long mebibytes(String quantity) {
      if (quantity.endsWith("Gi")) {
        return Long.parseLong(quantity.substring(0, quantity.length() - 2)) * 1024;
      }
      if (quantity.endsWith("Mi")) {
        return Long.parseLong(quantity.substring(0, quantity.length() - 2));
      }
      throw new IllegalArgumentException("memory limit " + quantity + " is not in Mi or Gi");
    }

    static int processors(String quantity) {
      double cpus =
          quantity.endsWith("m")
              ? Long.parseLong(quantity.substring(0, quantity.length() - 1)) / 1000.0
              : Double.parseDouble(quantity);
      return (int) Math.max(1, Math.ceil(cpus));
    }

    @SuppressWarnings("unchecked")
    static ChartJvm read(Path values, String component) throws IOException {
      Map<String, Object> root =
          new ObjectMapper(new YAMLFactory()).readValue(values.toFile(), Map.class);
      Map<String, Object> c = (Map<String, Object>) root.get(component);
      Map<String, Object> limits =
          (Map<String, Object>) ((Map<String, Object>) c.get("resources")).get("limits");
      return new ChartJvm(
          String.valueOf(c.getOrDefault("javaToolOptions", "")),
          String.valueOf(limits.get("memory")),
          String.valueOf(limits.get("cpu")));
    }
  }

  /** One run: the agent idle and at {@code agentN}, the controller idle and at {@code ctlN}. */
  void run(int run, int agentN, int controllerN) throws Exception {
    Path root = Files.createDirectories(work.resolve("footprint-" + run));
    Path values = repo.resolve("charts").resolve("jakri").resolve("values.yaml");
    ChartJvm agentJvm = ChartJvm.read(values, "agent");
    ChartJvm controllerJvm = ChartJvm.read(values, "controller");
    if (run == 0) {
      System.out.println("footprint: agent " + agentJvm + " -> " + agentJvm.flags());
      System.out.println("footprint: controller " + controllerJvm + " -> " + controllerJvm.flags());
      System.out.println("footprint: java " + javaBinary());
    }
    KubeBinaries.Result found = KubeBinaries.locate(root.resolve("bin"));
    KubeBinaries binaries =
        found.binaries().orElseThrow(() -> new IllegalStateException(found.missing().reason()));
    // 500 Instance Services need more cluster IPs than the test server's /24.
    List<String> flags = List.of("--service-cluster-ip-range=10.96.0.0/20");
    try (RealApiServer api = RealApiServer.start(binaries, root.resolve("api"), flags)) {
      KubernetesClient admin = api.admin();
      api.installCrds(Crds.load());
      admin
          .namespaces()
          .resource(new NamespaceBuilder().withNewMetadata().withName(NS).endMetadata().build())
          .create();
      api.serviceAccount(NS, "default"); // broker Pods need it; no controller-manager makes it
      api.apply(Files.readString(repo.resolve("agent").resolve("rbac").resolve("agent-rbac.yaml")));
      api.apply(
          Files.readString(
              repo.resolve("controller").resolve("rbac").resolve("controller-rbac.yaml")));
      for (String node : List.of(NODE, CONTROLLER_NODE)) {
        admin
            .nodes()
            .resource(new NodeBuilder().withNewMetadata().withName(node).endMetadata().build())
            .create();
      }
      Path agentConfig =
          api.kubeconfig(
              api.serviceAccountConfig("default", "jakri-agent"), root.resolve("agent.kubeconfig"));
      Path controllerConfig =
          api.kubeconfig(
              api.serviceAccountConfig(NS, "jakri-controller"),
              root.resolve("controller.kubeconfig"));
      agent(root, admin, agentJvm, agentConfig, agentN);
      controller(root, api, controllerJvm, controllerConfig, controllerN);
    }
  }

  // ------------------------------------------------------------------ agent

  private void agent(Path root, KubernetesClient admin, ChartJvm jvm, Path kubeconfig, int n)
      throws Exception {
    Map<String, String> env = jvm.env(options.agentEnv());
    env.put("KUBECONFIG", kubeconfig.toString());
    admin.resources(Configuration.class).inNamespace(NS).resource(simulated(3)).create();
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(2);
    try {
      Path dir = Files.createDirectories(root.resolve("agent"));
      KubeletEmulator emulator = emulator(dir, group);
      try {
        Readiness first = new Readiness(1, FootprintBench::instanceResourceOnly);
        Readiness three = new Readiness(distinct(3), FootprintBench::instanceResourceOnly);
        emulator.addListener(first);
        emulator.addListener(three);
        int metricsPort = FreePorts.one();
        List<String> args =
            List.of(
                "-cp",
                options.agentJar().toString(),
                "io.jakri.agent.cli.Main",
                "--plugins-dir=" + options.plugins(),
                "--node-name=" + NODE,
                "--device-plugin-dir=" + dir.resolve("dp"),
                "--pod-resources-socket=" + dir.resolve("pr").resolve("kubelet.sock"),
                "--tidy-node",
                "--log-format=json",
                "--metrics-port=" + metricsPort,
                "--discovery-handlers-dir="
                    + Files.createDirectories(dir.resolve("discovery-handlers")));
        List<String> flags = withAppArchive(jvm, "agent", options.agentJar());
        try (ChildJvm agent =
            ChildJvm.start(javaBinary(), flags, env, args, dir.resolve("agent.log"))) {
          add.accept(
              "footprint_agent_start_to_first_advertised_ms",
              (first.await(READY) - agent.startedAt()) / 1e6);
          three.await(READY);
          Bench.settle();
          measure("footprint_agent", "idle", agent);
          floorAgent(root.resolve("floor-agent-idle"), jvm, env, 3, group, "idle");

          // The first three are registered already (and stay): the rest are awaited.
          Readiness all =
              new Readiness(distinct(n) - distinct(3), FootprintBench::instanceResourceOnly);
          emulator.addListener(all);
          admin.resources(Configuration.class).inNamespace(NS).resource(simulated(n)).update();
          all.await(READY);
          Bench.settle();
          measure("footprint_agent", n + "_instances", agent);
          floorAgent(root.resolve("floor-agent-" + n), jvm, env, n, group, n + "_instances");
        }
      } finally {
        emulator.close();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
    // The controller's run starts with no Instance of the agent's left.
    admin.resources(Configuration.class).inNamespace(NS).withName("sim").delete();
    admin.resources(Instance.class).inNamespace(NS).delete();
    await(
        () -> admin.resources(Instance.class).inNamespace(NS).list().getItems().isEmpty(),
        "the agent's Instances to be deleted");
  }

  /** The agent's floor: N bare servers and informers, until all are advertised. */
  private void floorAgent(
      Path dir, ChartJvm jvm, Map<String, String> env, int n, EventLoopGroup group, String label)
      throws Exception {
    String classpath = options.benchClasspath() + ":" + options.agentJar();
    List<String> flags =
        floorFlags(
            jvm,
            "agent",
            classpath,
            (d, f) -> floorAgentRun(d, f, classpath, env, 3, group, Optional.empty()));
    floorAgentRun(dir, flags, classpath, env, n, group, Optional.of(label));
  }

  /** One run of the agent's floor; measured under {@code label} when there is one. */
  private void floorAgentRun(
      Path dir,
      List<String> flags,
      String classpath,
      Map<String, String> env,
      int n,
      EventLoopGroup group,
      Optional<String> label)
      throws Exception {
    Files.createDirectories(dir);
    KubeletEmulator emulator = emulator(dir, group);
    try {
      Readiness first = new Readiness(1, r -> 1);
      Readiness all = new Readiness(n, r -> 1);
      emulator.addListener(first);
      emulator.addListener(all);
      List<String> args =
          List.of(
              "-cp",
              classpath,
              BareCluster.class.getName(),
              "agent",
              dir.resolve("dp").toString(),
              Integer.toString(n));
      try (ChildJvm floor =
          ChildJvm.start(javaBinary(), flags, env, args, dir.resolve("floor.log"))) {
        long firstAt = first.await(READY);
        all.await(READY);
        floor.awaitLog("BARE_READY", READY);
        if (label.isEmpty()) {
          return;
        }
        if (label.get().equals("idle")) {
          add.accept(
              "footprint_agent_start_to_first_advertised_ms_floor",
              (firstAt - floor.startedAt()) / 1e6);
        }
        Bench.settle();
        measure("footprint_agent", label.get() + "_floor", floor);
      }
    } finally {
      emulator.close();
    }
  }

  // ------------------------------------------------------------------ controller

  private void controller(Path root, RealApiServer api, ChartJvm jvm, Path kubeconfig, int n)
      throws Exception {
    KubernetesClient admin = api.admin();
    Map<String, String> env = jvm.env(options.agentEnv());
    env.put("KUBECONFIG", kubeconfig.toString());
    Configuration configuration = ControllerBench.createConfiguration(admin, NS);
    // The chart's ValidatingWebhookConfiguration (caBundle set by the controller), made after the
    // Configuration so that no admission call is waited for in this run.
    api.apply(webhookConfiguration());
    Path dir = Files.createDirectories(root.resolve("controller"));
    int[] ports = FreePorts.take(2);
    int metricsPort = ports[0];
    List<String> args =
        List.of(
            "-cp",
            controllerJar().toString(),
            "io.jakri.controller.Main",
            "--log-format=json",
            "--metrics-port=" + metricsPort,
            "--webhook-port=" + ports[1],
            "--webhook-names="
                + WEBHOOK
                + "."
                + NS
                + ".svc,"
                + WEBHOOK
                + "."
                + NS
                + ".svc.cluster.local",
            "--webhook-configuration=" + WEBHOOK);
    List<String> flags = withAppArchive(jvm, "controller", controllerJar());
    try (ChildJvm controller =
        ChildJvm.start(javaBinary(), flags, env, args, dir.resolve("controller.log"))) {
      add.accept(
          "footprint_controller_start_to_ready_ms",
          (awaitReady(controller, metricsPort) - controller.startedAt()) / 1e6);
      Bench.settle();
      measure("footprint_controller", "idle", controller);
      floorController(dir.resolve("floor-idle"), jvm, env, "idle");

      for (int i = 0; i < n; i++) {
        admin
            .resource(
                ControllerBench.instance(
                    configuration, String.format("cam-%06x", i), NS, CONTROLLER_NODE))
            .create();
      }
      await(
          () -> admin.pods().inNamespace(NS).list().getItems().size() >= n,
          "the controller to create " + n + " broker Pods");
      await(
          () -> admin.services().inNamespace(NS).list().getItems().size() >= n + 1,
          "the controller to create " + (n + 1) + " Services");
      Bench.settle();
      measure("footprint_controller", n + "_instances", controller);
      floorController(dir.resolve("floor-" + n), jvm, env, n + "_instances");
    }
  }

  private void floorController(Path dir, ChartJvm jvm, Map<String, String> env, String label)
      throws Exception {
    String classpath = options.benchClasspath() + ":" + controllerJar();
    List<String> flags =
        floorFlags(
            jvm,
            "controller",
            classpath,
            (d, f) -> floorControllerRun(d, f, classpath, env, Optional.empty()));
    floorControllerRun(dir, flags, classpath, env, Optional.of(label));
  }

  /** One run of the controller's floor; measured under {@code label} when there is one. */
  private void floorControllerRun(
      Path dir,
      List<String> flags,
      String classpath,
      Map<String, String> env,
      Optional<String> label)
      throws Exception {
    Files.createDirectories(dir);
    List<String> args = List.of("-cp", classpath, BareCluster.class.getName(), "controller");
    try (ChildJvm floor =
        ChildJvm.start(javaBinary(), flags, env, args, dir.resolve("floor.log"))) {
      long readyAt = floor.awaitLog("BARE_READY", READY);
      if (label.isEmpty()) {
        return;
      }
      if (label.get().equals("idle")) {
        add.accept(
            "footprint_controller_start_to_ready_ms_floor", (readyAt - floor.startedAt()) / 1e6);
      }
      Bench.settle();
      measure("footprint_controller", label.get() + "_floor", floor);
    }
  }

  // ------------------------------------------------------------------ helpers

  private void measure(String prefix, String label, ChildJvm jvm) throws Exception {
    add.accept(prefix + "_rss_" + label + "_mb", jvm.rssKb() / 1024.0);
    add.accept(prefix + "_threads_" + label, (double) jvm.threads());
    if (String.valueOf(options.agentEnv().get("JAVA_TOOL_OPTIONS")).contains("NativeMemory")) {
      Path file = jvm.log().resolveSibling(prefix + "_" + label + ".nmt");
      Files.writeString(file, jvm.nativeMemorySummary());
      System.out.println("  native memory: " + file);
    }
    add.accept(prefix + "_heap_" + label + "_mb", jvm.heapAfterGcBytes() / 1024.0 / 1024.0);
  }

  /**
   * The runtime under test: {@code --java} if given, else the image's JRE for this architecture
   * when the images module has built it, else this JVM's.
   */
  Path javaBinary() {
    String arch = System.getProperty("os.arch").equals("aarch64") ? "arm64" : "amd64";
    Path image = repo.resolve("images/target/jre-rootfs-" + arch).resolve("opt/java/bin/java");
    return options
        .componentJava()
        .orElse(
            Files.isExecutable(image)
                ? image
                : Path.of(System.getProperty("java.home"), "bin", "java"));
  }

  /**
   * The chart's flags plus, unless {@code --no-cds}, the component's AppCDS archive as the image
   * ships it: dumped by the runtime under test from the image build's class list, for {@code jar}
   * at the path this bench gives it (an archive names its jar's path; the image's names
   * /opt/jakri/...), once per bench. Without the class list (images not built) the flags alone,
   * said once.
   */
  private List<String> withAppArchive(ChartJvm jvm, String component, Path jar) throws Exception {
    List<String> flags = new ArrayList<>(jvm.flags());
    Path classlist = repo.resolve("images/target/cds").resolve(component + ".classlist");
    if (!options.cds()) {
      return flags;
    }
    if (!Files.isRegularFile(classlist)) {
      System.out.println(
          "footprint: no "
              + classlist
              + " (build the images module): "
              + component
              + " runs without the image's AppCDS archive");
      return flags;
    }
    Path archive = appArchives.get(component);
    if (archive == null) {
      archive = Files.createDirectories(work.resolve("app-cds-" + component)).resolve("app.jsa");
      dump(classlist, jar.toString(), archive);
      appArchives.put(component, archive);
    }
    flags.add("-XX:SharedArchiveFile=" + archive);
    return flags;
  }

  /** Dumps a static CDS archive of the classes in {@code classlist} for {@code classpath}. */
  private void dump(Path classlist, String classpath, Path archive) throws Exception {
    Path log = archive.resolveSibling(archive.getFileName() + ".dump.log");
    Process dump =
        new ProcessBuilder(
                javaBinary().toString(),
                "-XX:-UsePerfData",
                "-Xshare:dump",
                "-XX:SharedClassListFile=" + classlist,
                "-XX:SharedArchiveFile=" + archive,
                "-cp",
                classpath)
            .redirectErrorStream(true)
            .redirectOutput(log.toFile())
            .start();
    if (!dump.waitFor(5, TimeUnit.MINUTES) || dump.exitValue() != 0 || !Files.exists(archive)) {
      dump.destroyForcibly();
      throw new IllegalStateException("AppCDS dump failed; see " + log);
    }
  }

  /**
   * The floor's flags: the chart's, plus (unless {@code --no-cds}) an AppCDS archive of the floor
   * program's own, trained on one unmeasured run of it ({@code train}, given the flag that writes
   * its class list), so that floor and component start on equal terms.
   */
  private List<String> floorFlags(ChartJvm jvm, String role, String classpath, FloorRun train)
      throws Exception {
    List<String> flags = new ArrayList<>(jvm.flags());
    if (!options.cds()) {
      return flags;
    }
    Path archive = floorArchives.get(role);
    if (archive == null) {
      Path dir = Files.createDirectories(work.resolve("floor-cds-" + role));
      Path classlist = dir.resolve("floor.classlist");
      List<String> training = new ArrayList<>(flags);
      training.add("-XX:DumpLoadedClassList=" + classlist);
      train.run(dir.resolve("training"), training);
      archive = dir.resolve("floor.jsa");
      dump(classlist, classpath, archive);
      floorArchives.put(role, archive);
    }
    flags.add("-XX:SharedArchiveFile=" + archive);
    return flags;
  }

  /** One run of a floor program with the given JVM flags, in {@code dir}. */
  @FunctionalInterface
  private interface FloorRun {
    void run(Path dir, List<String> flags) throws Exception;
  }

  Path controllerJar() {
    return repo.resolve("controller").resolve("target").resolve("jakri-controller.jar");
  }

  /**
   * A started kubelet emulator in this JVM for {@code dir/dp} (PodResources on {@code
   * dir/pr/kubelet.sock}), checkpoint writing off, so that the child JVM does its own work only.
   */
  static KubeletEmulator emulator(Path dir, EventLoopGroup group) throws IOException {
    Files.createDirectories(dir.resolve("pr"));
    KubeletEmulator emulator =
        KubeletEmulator.builder(dir.resolve("dp"))
            .podResourcesSocket(dir.resolve("pr").resolve("kubelet.sock"))
            .writeCheckpoint(false)
            .eventLoopGroup(group)
            .build();
    emulator.start();
    return emulator;
  }

  /** Instance resources count once advertised; the Configuration's class resource never does. */
  private static int instanceResourceOnly(String resource) {
    return resource.equals("akri.sh/sim") ? Integer.MAX_VALUE : 1;
  }

  /** How many distinct Instances {@code n} simulated devices on {@link #NODE} make. */
  private static int distinct(int n) {
    Set<String> names = new HashSet<>();
    for (int i = 0; i < n; i++) {
      names.add(InstanceNames.instanceName("sim", "simple-device-" + NODE + "-" + i, false, NODE));
    }
    return names.size();
  }

  private static Configuration simulated(int count) {
    String yaml =
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: sim\n  namespace: "
            + NS
            + "\nspec:\n  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n"
            + "      count: "
            + count
            + "\n";
    return SERIALIZATION.unmarshal(yaml, Configuration.class);
  }

  static long awaitReady(ChildJvm jvm, int port) throws Exception {
    HttpClient http = HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(1)).build();
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz"))
            .timeout(Duration.ofSeconds(2))
            .build();
    long deadline = System.nanoTime() + READY.toNanos();
    while (System.nanoTime() < deadline) {
      try {
        if (http.send(request, HttpResponse.BodyHandlers.discarding()).statusCode() == 200) {
          return System.nanoTime();
        }
      } catch (IOException e) {
        // not listening yet
      }
      if (!jvm.alive()) {
        throw new IllegalStateException("exited: " + Files.readString(jvm.log()));
      }
      Thread.sleep(10);
    }
    throw new IllegalStateException("not ready after " + READY + ": " + jvm.log());
  }

  interface Condition {
    boolean holds() throws Exception;
  }

  private static void await(Condition condition, String what) throws Exception {
    long deadline = System.nanoTime() + READY.toNanos();
    while (!condition.holds()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("gave up waiting for " + what);
      }
      Thread.sleep(200);
    }
  }

  static String webhookConfiguration() {
    return """
        apiVersion: admissionregistration.k8s.io/v1
        kind: ValidatingWebhookConfiguration
        metadata:
          name: %s
        webhooks:
          - name: configurations.akri.sh
            admissionReviewVersions: ["v1"]
            sideEffects: None
            failurePolicy: Ignore
            timeoutSeconds: 10
            clientConfig:
              service:
                name: %s
                namespace: %s
                path: /validate
                port: 443
            rules:
              - apiGroups: ["akri.sh"]
                apiVersions: ["v0"]
                operations: ["CREATE", "UPDATE"]
                resources: ["configurations"]
        """
        .formatted(WEBHOOK, WEBHOOK, NS);
  }
}
