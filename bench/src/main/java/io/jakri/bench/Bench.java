package io.jakri.bench;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.Empty;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The benchmark suite: every figure of issue 7 that this machine can measure, each next to its
 * physical floor measured in the same run. The agent always runs as a separate JVM (the shipped
 * jar, with the JVM flags under test), the kubelet emulator in this JVM, so the agent's RSS,
 * threads and heap are its own. Prints a table and one {@code BENCH name value unit} line per
 * figure (and per floor and ratio). Figures are medians over the runs.
 *
 * <p>Usage: {@code Bench [--quick] [--runs N] [--sizes 1000,5000,10000] [--agent-jar PATH]
 * [--plugins DIR] [--agent-jvm "FLAGS"] [--agent-env K=V] [--no-cds] [--only
 * idle,cluster,writes,fair,zeroconf,mqtt,coap,modbus,udev,opcua,opcua-silent,controller,scale,
 * floor,shutdown,slowkubelet] [--bench-jar PATH] [--keep] [--work-root DIR]}.
 */
public final class Bench {

  private static final Duration READY_TIMEOUT = Duration.ofMinutes(4);
  private static final String NODE = "bench-node";
  private static final Path SELF_STAT = Path.of("/proc/self/stat");

  private final Options options;
  private final Path work;
  private final Map<String, List<Double>> samples = new LinkedHashMap<>();
  private final List<Figure> figures = new ArrayList<>();
  private List<String> agentJvm;
  private List<String> floorJvm;
  private final Map<String, String> notMeasured = new LinkedHashMap<>();

  private Bench(Options options, Path work) {
    this.options = options;
    this.work = work;
    this.agentJvm = options.agentJvm;
    this.floorJvm = options.agentJvm;
  }

  /**
   * Application class-data sharing: one training run of the idle agent with {@code
   * -XX:ArchiveClassesAtExit} (the archive is written when it exits on SIGTERM); later agents map
   * the archived classes instead of loading and verifying them.
   */
  private Path trainCds() throws Exception {
    Path root = Files.createDirectories(work.resolve("cds-training"));
    Path config = Files.createDirectories(root.resolve("config"));
    Path archive = root.resolve("jakri-agent.jsa");
    writeSimulated(config.resolve("sim.yaml"), "sim", 3);
    try (Harness h = new Harness(root)) {
      Readiness ready = new Readiness(distinctInstances("sim", 3) + 1, r -> 1);
      h.emulator.addListener(ready);
      List<String> flags = new ArrayList<>(agentJvm);
      flags.add("-XX:ArchiveClassesAtExit=" + archive);
      try (ChildJvm agent = h.startAgent(flags, config, root.resolve("agent.log"))) {
        ready.await(READY_TIMEOUT);
      }
    }
    if (!Files.exists(archive)) {
      throw new IllegalStateException("no CDS archive written; see " + root.resolve("agent.log"));
    }
    return archive;
  }

  /** The same for the floor program, so that both start with the same advantage. */
  private Path trainFloorCds() throws Exception {
    Path root = Files.createDirectories(work.resolve("cds-training-floor"));
    Path archive = root.resolve("bare-servers.jsa");
    try (Harness h = new Harness(root)) {
      Readiness ready = new Readiness(3, r -> 1);
      h.emulator.addListener(ready);
      List<String> flags = new ArrayList<>(floorJvm);
      flags.add("-XX:ArchiveClassesAtExit=" + archive);
      try (ChildJvm floor = startFloor(h, flags, 3, root.resolve("floor.log"))) {
        ready.await(READY_TIMEOUT);
      }
    }
    if (!Files.exists(archive)) {
      throw new IllegalStateException("no CDS archive written; see " + root.resolve("floor.log"));
    }
    return archive;
  }

  private ChildJvm startFloor(Harness h, List<String> jvm, int n, Path log) throws IOException {
    return ChildJvm.start(
        jvm,
        options.agentEnv,
        List.of(
            "-cp",
            options.benchClasspath + ":" + options.agentJar,
            BareServers.class.getName(),
            h.dir.toString(),
            Integer.toString(n)),
        log);
  }

  /** Command-line options. */
  record Options(
      boolean quick,
      int runs,
      int[] sizes,
      Path agentJar,
      Path plugins,
      List<String> agentJvm,
      Path benchClasspath,
      boolean keep,
      Set<String> scenarios,
      boolean cds,
      Map<String, String> agentEnv,
      Path workRoot,
      Optional<Path> componentJava) {

    /**
     * N Instances need 2N + about 40 file descriptors in the agent (each server's listening socket
     * and its end of the kubelet's connection; measured: {@code agent_fds_per_instance_at_N}); a
     * larger N than this process's open-files limit allows (with 150 to spare) is lowered to a
     * multiple of 100, and said so.
     */
    static int fitDescriptors(int n) {
      long limit = openFilesLimit();
      int max = (int) Math.max(100, (limit - 150) / 2 / 100 * 100);
      if (n > max) {
        System.out.printf(
            "NOTE: %d Instances need about %d open files but the limit is %d; measuring %d%n",
            n, 2L * n + 150, limit, max);
        return max;
      }
      return n;
    }

    private static long openFilesLimit() {
      try {
        for (String line : Files.readAllLines(Path.of("/proc/self/limits"))) {
          if (line.startsWith("Max open files")) {
            return Long.parseLong(line.substring(26).trim().split("\\s+")[0]);
          }
        }
      } catch (IOException | RuntimeException e) {
        // fall through
      }
      return Long.MAX_VALUE;
    }

    static Options parse(String[] args) {
      boolean quick = false;
      int runs = 3;
      int[] sizes = {1000, 5000, 10000};
      Path agentJar = Path.of("agent/target/jakri-agent.jar");
      Path plugins = Path.of("agent/target/plugins");
      List<String> jvm = AgentJvm.RECOMMENDED;
      Path benchCp =
          Path.of(Bench.class.getProtectionDomain().getCodeSource().getLocation().getPath());
      boolean keep = false;
      boolean runsGiven = false;
      Set<String> scenarios =
          Set.of(
              "idle",
              "scale",
              "floor",
              "cluster",
              "writes",
              "fair",
              "zeroconf",
              "mqtt",
              "coap",
              "modbus",
              "udev",
              "opcua",
              "opcua-silent",
              "controller",
              "shutdown",
              "slowkubelet",
              "footprint");
      boolean cds = true;
      Map<String, String> env = new LinkedHashMap<>(AgentJvm.RECOMMENDED_ENV);
      Path workRoot = defaultWorkRoot();
      Optional<Path> componentJava = Optional.empty();
      for (int i = 0; i < args.length; i++) {
        switch (args[i]) {
          case "--quick" -> quick = true;
          case "--runs" -> {
            runs = Integer.parseInt(args[++i]);
            runsGiven = true;
          }
          case "--sizes" ->
              sizes = Arrays.stream(args[++i].split(",")).mapToInt(Integer::parseInt).toArray();
          case "--agent-jar" -> agentJar = Path.of(args[++i]);
          case "--plugins" -> plugins = Path.of(args[++i]);
          case "--agent-jvm" ->
              jvm = args[++i].isBlank() ? List.of() : List.of(args[i].trim().split("\\s+"));
          case "--bench-jar" -> benchCp = Path.of(args[++i]);
          case "--keep" -> keep = true;
          case "--work-root" -> workRoot = Path.of(args[++i]);
          case "--java" -> componentJava = Optional.of(javaBinary(Path.of(args[++i])));
          case "--only" -> scenarios = Set.of(args[++i].split(","));
          case "--cds" -> cds = true;
          case "--no-cds" -> cds = false;
          case "--agent-env" -> {
            String[] kv = args[++i].split("=", 2);
            if (kv[1].isEmpty()) {
              env.remove(kv[0]);
            } else {
              env.put(kv[0], kv[1]);
            }
          }
          default -> throw new IllegalArgumentException("unknown option " + args[i]);
        }
      }
      if (quick) {
        if (!runsGiven) {
          runs = 1;
        }
        sizes = new int[] {1000};
      }
      sizes = Arrays.stream(sizes).map(Options::fitDescriptors).toArray();
      return new Options(
          quick,
          runs,
          sizes,
          agentJar.toAbsolutePath(),
          plugins.toAbsolutePath(),
          jvm,
          benchCp.toAbsolutePath(),
          keep,
          scenarios,
          cds,
          Map.copyOf(env),
          workRoot.toAbsolutePath(),
          componentJava);
    }

    /** {@code path} if it is a java executable, else {@code path/bin/java} (a JDK's home). */
    private static Path javaBinary(Path path) {
      Path binary = Files.isDirectory(path) ? path.resolve("bin").resolve("java") : path;
      if (!Files.isExecutable(binary)) {
        throw new IllegalArgumentException("--java " + path + ": no java executable there");
      }
      return binary.toAbsolutePath();
    }

    /**
     * Where the work dir (device-plugin dirs with their thousands of sockets, logs, AppCDS
     * archives) goes: {@code /dev/shm} when it is a writable directory, else the JVM's temp dir.
     * Creating a socket file creates an inode; on ext4 without a journal (this machine's root
     * filesystem) every new inode is first checked against recently deleted ones, which made each
     * of a kubelet restart's 1,000 socket creations scan the 1,000 just deleted (measured with
     * perf: {@code recently_deleted} and {@code find_inode_bit} were most of the agent's kernel
     * time). A kubelet's device-plugin dir on a journaled filesystem does not pay this, so the
     * bench measures on tmpfs; {@code --work-root DIR} measures elsewhere.
     */
    private static Path defaultWorkRoot() {
      Path shm = Path.of("/dev/shm");
      return Files.isDirectory(shm) && Files.isWritable(shm)
          ? shm
          : Path.of(System.getProperty("java.io.tmpdir"));
    }
  }

  public static void main(String[] args) throws Exception {
    // The emulator in this JVM would log every registration; the agent's own log is in its file.
    System.setProperty("JAKRI_EMULATOR_LOG_LEVEL", "ERROR");
    System.setProperty("JAKRI_LOG_LEVEL", "WARN");
    // This JVM stands in for the kubelet, which dials every plugin socket with a channel of its
    // own: gRPC would capture a stack trace per channel to report channels never shut down.
    System.setProperty("io.grpc.ManagedChannel.enableAllocationTracking", "false");
    Options options = Options.parse(args);
    // A short name: a Unix socket path has at most 107 bytes, and the class resource's socket
    // (jakri-class-akri.sh_sim-<ts>.sock) sits three directories below.
    Path work = Files.createTempDirectory(options.workRoot, "jb-");
    long start = System.nanoTime();
    System.out.printf(
        "jakri bench: %d run(s) per figure, sizes %s, agent JVM flags %s%s env %s, cores %d,"
            + " load %s, work dir %s (%s)%n",
        options.runs,
        Arrays.toString(options.sizes),
        options.agentJvm,
        options.cds ? " + AppCDS" : "",
        options.agentEnv,
        Runtime.getRuntime().availableProcessors(),
        loadAverage(),
        work,
        Files.getFileStore(work).type());
    Bench bench = new Bench(options, work);
    bench.runAll();
    bench.print();
    System.out.printf(
        "bench took %d s; load %s; work dir %s%n",
        (System.nanoTime() - start) / 1_000_000_000, loadAverage(), work);
    if (!options.keep) {
      deleteTree(work);
    }
    System.exit(0);
  }

  // ---------------------------------------------------------------- scenarios

  private void runAll() throws Exception {
    // The footprint and controller rows run what the chart ships, which has no AppCDS archive.
    if (options.cds && !Set.of("footprint", "controller").containsAll(options.scenarios)) {
      agentJvm = new ArrayList<>(agentJvm);
      agentJvm.add("-XX:SharedArchiveFile=" + trainCds());
      floorJvm = new ArrayList<>(floorJvm);
      floorJvm.add("-XX:SharedArchiveFile=" + trainFloorCds());
      System.out.println("agent JVM flags with the AppCDS archive: " + agentJvm);
    }
    for (int run = 0; run < options.runs && options.scenarios.contains("idle"); run++) {
      idleRun(run);
    }
    // A failure of one of these rows (their set-up has more moving parts: a mock API server, ten
    // agents, an avahi-daemon) is printed as "not measured" instead of costing every other row.
    List<String> clusterJvm = new ArrayList<>(agentJvm);
    if (options.agentJvm.equals(AgentJvm.RECOMMENDED)) {
      clusterJvm.removeAll(AgentJvm.STANDALONE_ONLY);
      clusterJvm.addAll(AgentJvm.CLUSTER_EXTRA); // the chart's flags for cluster mode
      if (options.scenarios.contains("cluster") || options.scenarios.contains("writes")) {
        System.out.println(
            "cluster-mode agents drop "
                + AgentJvm.STANDALONE_ONLY
                + " and add "
                + AgentJvm.CLUSTER_EXTRA);
      }
    }
    ClusterBench cluster = new ClusterBench(options, work, clusterJvm, this::add);
    if (options.scenarios.contains("cluster")) {
      attempt(
          "allocate_cluster_p50_ms",
          () -> {
            for (int run = 0; run < options.runs; run++) {
              cluster.allocateRun(run);
            }
          });
    }
    if (options.scenarios.contains("writes")) {
      attempt("api_writes_per_device", () -> cluster.writesRun(10, 100));
    }
    if (options.scenarios.contains("fair")) {
      attempt(
          "fair_small_beside_big_advertise_ms",
          () -> {
            for (int run = 0; run < options.runs; run++) {
              cluster.fairRun(run, options.quick ? 2_000 : 10_000);
            }
          });
    }
    if (options.scenarios.contains("zeroconf")) {
      attempt(
          "zeroconf_publish_to_advertised_ms",
          () ->
              new ZeroconfBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 3 : 7)
                  .ifPresent(why -> notMeasured.put("zeroconf_publish_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("mqtt")) {
      attempt(
          "mqtt_announce_to_advertised_ms",
          () ->
              new MqttBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 5 : 15)
                  .ifPresent(why -> notMeasured.put("mqtt_announce_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("coap")) {
      attempt(
          "coap_appear_to_advertised_ms",
          () ->
              new CoapBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 5 : 12)
                  .ifPresent(why -> notMeasured.put("coap_appear_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("modbus")) {
      attempt(
          "modbus_appear_to_advertised_ms",
          () ->
              new ModbusBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 5 : 12)
                  .ifPresent(why -> notMeasured.put("modbus_appear_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("opcua")) {
      attempt(
          "opcua_discovery_to_advertised_ms",
          () ->
              new OpcuaBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 5 : 15, options.quick ? 1 : 3)
                  .ifPresent(why -> notMeasured.put("opcua_discovery_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("opcua-silent")) {
      attempt(
          "opcua_silent240_heap_after_gc_mb",
          () -> {
            // One run (about 100 s) whatever --runs says: the figures are sizes, not latencies.
            new OpcuaSilentBench(options, work, agentJvm, this::add).run(0);
          });
    }
    if (options.scenarios.contains("udev")) {
      attempt(
          "udev_hotplug_to_advertised_ms",
          () ->
              new UdevBench(options, work, agentJvm, this::add)
                  .run(options.quick ? 5 : 20)
                  .ifPresent(why -> notMeasured.put("udev_hotplug_to_advertised_ms", why)));
    }
    if (options.scenarios.contains("controller")) {
      ControllerBench controller = new ControllerBench(options, work, this::add);
      int n = options.quick ? 500 : 1000;
      attempt(
          "controller_defaults_rss_idle_mb",
          () -> {
            if (!Files.isRegularFile(controller.controllerJar())) {
              throw new IllegalStateException(controller.controllerJar() + " is not built");
            }
            for (int run = 0; run < options.runs; run++) {
              controller.run("defaults", List.of(), n, run);
              controller.run("recommended", CONTROLLER_RECOMMENDED, n, run);
            }
          });
      controllerInstances = n;
    }
    if (options.scenarios.contains("footprint")) {
      FootprintBench footprint = new FootprintBench(options, work, this::add);
      attempt(
          "footprint_agent_rss_idle_mb",
          () -> {
            for (int run = 0; run < options.runs; run++) {
              footprint.run(run, FOOTPRINT_AGENT_INSTANCES, FOOTPRINT_CONTROLLER_INSTANCES);
            }
          });
    }
    if (options.scenarios.contains("scale")
        || options.scenarios.contains("floor")
        || options.scenarios.contains("shutdown")) {
      warmKubelet();
    }
    if (options.scenarios.contains("slowkubelet")) {
      int n = Arrays.stream(options.sizes).max().orElse(1000);
      SlowKubeletBench slow = new SlowKubeletBench(options, work, agentJvm, this::add);
      attempt(
          "slow_kubelet_small_beside_big_advertise_ms",
          () -> {
            for (int run = 0; run < options.runs; run++) {
              slow.run(n, run);
            }
          });
      slowKubeletInstances = n;
    }
    if (options.scenarios.contains("shutdown")) {
      int n = Arrays.stream(options.sizes).max().orElse(1000);
      ShutdownBench shutdown = new ShutdownBench(options, work, agentJvm, floorJvm, this::add);
      attempt(
          "agent_sigterm_to_exit_" + n + "_ms",
          () -> {
            for (int run = 0; run < options.runs; run++) {
              // Turns going first, as the scale rows.
              if (run % 2 == 0) {
                shutdown.agentRun(n, run);
                shutdown.floorRun(n, run);
              } else {
                shutdown.floorRun(n, run);
                shutdown.agentRun(n, run);
              }
            }
          });
      shutdownInstances = n;
    }
    for (int n : options.sizes) {
      for (int run = 0; run < options.runs; run++) {
        // Agent and floor take turns going first, so neither always meets the other's leftovers
        // (page cache, the emulator's JIT state, a GC owed in this JVM).
        boolean agentFirst = run % 2 == 0;
        if (agentFirst && options.scenarios.contains("scale")) {
          scaleRun(n, run, n == 1000);
        }
        if (options.scenarios.contains("floor")) {
          floorRun(n, run, n == 1000);
        }
        if (!agentFirst && options.scenarios.contains("scale")) {
          scaleRun(n, run, n == 1000);
        }
      }
    }
    summarise();
  }

  /** 3 Instances: idle RSS, Allocate vs a no-op RPC, discovery → advertised. */
  private void idleRun(int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("idle-" + run));
    Path config = Files.createDirectories(root.resolve("config"));
    writeSimulated(config.resolve("sim.yaml"), "sim", 3);
    writeSimulated(config.resolve("disc.yaml"), "disc", 1);
    try (Harness h = new Harness(root)) {
      int distinct = distinctInstances("sim", 3) + distinctInstances("disc", 1);
      Readiness ready = new Readiness(distinct + 2, r -> r.equals("akri.sh/sim") ? 3 : 1);
      h.emulator.addListener(ready);
      try (ChildJvm agent = h.startAgent(config, root.resolve("agent.log"))) {
        long at = ready.await(READY_TIMEOUT);
        add("agent_cpu_to_3_instances_advertised_ms", agent.cpuMs());
        add("agent_start_to_3_instances_advertised_ms", ms(at - agent.startedAt()));
        settle();
        add("agent_rss_idle_3_instances_mb", agent.rssKb() / 1024.0);
        add("agent_threads_idle", agent.threads());
        add("agent_fds_idle", agent.openFiles());
        add("agent_heap_idle_mb", agent.heapAfterGcBytes() / (1024.0 * 1024));
        add("agent_rss_idle_3_instances_after_gc_mb", agent.rssKb() / 1024.0);
        allocateLatency(h);
        discoveryLatency(h, config, agent.log());
      }
    }
  }

  /** N Instances: time until all are advertised, RSS, heap, threads; restart recovery. */
  private void scaleRun(int n, int run, boolean restart) throws Exception {
    Path root = Files.createDirectories(work.resolve("scale-" + n + "-" + run));
    Path config = Files.createDirectories(root.resolve("config"));
    writeSimulated(config.resolve("sim.yaml"), "sim", n);
    int distinct = distinctInstances("sim", n);
    try (Harness h = new Harness(root)) {
      Readiness ready = new Readiness(distinct + 1, r -> r.equals("akri.sh/sim") ? distinct : 1);
      h.emulator.addListener(ready);
      try (ChildJvm agent = h.startAgent(config, root.resolve("agent.log"))) {
        long at = ready.await(READY_TIMEOUT);
        add("agent_cpu_to_" + n + "_instances_advertised_ms", agent.cpuMs());
        add("agent_start_to_" + n + "_instances_advertised_ms", ms(at - agent.startedAt()));
        add("agent_first_to_last_registration_" + n + "_ms", ms(at - ready.firstRegisteredAt()));
        settle();
        add("agent_rss_" + n + "_instances_mb", agent.rssKb() / 1024.0);
        add("agent_threads_" + n + "_instances", agent.threads());
        add("agent_fds_" + n + "_instances", agent.openFiles());
        add("kubelet_side_fds_" + n + "_instances", selfOpenFiles());
        add("agent_heap_" + n + "_instances_mb", agent.heapAfterGcBytes() / (1024.0 * 1024));
        if (restart) {
          restartRecovery(h, agent, distinct + 1, distinct, "", n);
        }
      }
    }
  }

  /**
   * The kubelet emulator runs in this JVM, and its registration, dial and restart paths are
   * compiled by the JIT while they first run: measured with perf, half of this JVM's CPU during the
   * first measured restart went to its JIT compiler threads and interpreted code, so whichever side
   * ran first was charged for it. One unmeasured round first: the floor program with 1,000
   * resources through two kubelet restarts.
   */
  private void warmKubelet() throws Exception {
    Path root = Files.createDirectories(work.resolve("kubelet-warm-up"));
    try (Harness h = new Harness(root)) {
      Readiness ready = new Readiness(1000, r -> 1);
      h.emulator.addListener(ready);
      try (ChildJvm floor = startFloor(h, floorJvm, 1000, root.resolve("floor.log"))) {
        ready.await(READY_TIMEOUT);
        restartOnce(h, 1000, 1);
        restartOnce(h, 1000, 1);
      }
    }
  }

  /** The floor: N bare gRPC servers started and registered by a minimal program. */
  private void floorRun(int n, int run, boolean restart) throws Exception {
    Path root = Files.createDirectories(work.resolve("floor-" + n + "-" + run));
    try (Harness h = new Harness(root)) {
      Readiness ready = new Readiness(n, r -> 1);
      h.emulator.addListener(ready);
      try (ChildJvm floor = startFloor(h, floorJvm, n, root.resolve("floor.log"))) {
        long at = ready.await(READY_TIMEOUT);
        add("floor_cpu_to_" + n + "_advertised_ms", floor.cpuMs());
        add("floor_start_to_" + n + "_advertised_ms", ms(at - floor.startedAt()));
        add("floor_first_to_last_registration_" + n + "_ms", ms(at - ready.firstRegisteredAt()));
        settle();
        add("floor_rss_" + n + "_mb", floor.rssKb() / 1024.0);
        add("floor_threads_" + n, floor.threads());
        add("floor_fds_" + n, floor.openFiles());
        if (restart) {
          restartRecovery(h, floor, n, 1, "floor_", n);
        }
      }
    }
  }

  /**
   * Kubelet restart recovery of the child (agent or floor program), twice. The first restart is the
   * child's first: its restart paths run interpreted and get compiled meanwhile (the emulator's
   * were compiled by {@link #warmKubelet()}); it is reported apart as {@code
   * kubelet_restart_recovery_first_*}. The figure is the second: its wall and CPU time (child and
   * kubelet emulator), and the ListAndWatch messages and devices the kubelet received while
   * recovering.
   */
  private void restartRecovery(
      Harness h, ChildJvm child, int expected, int classDevices, String prefix, int n)
      throws Exception {
    Readiness first = restartOnce(h, expected, classDevices);
    add(
        prefix + "kubelet_restart_recovery_first_" + n + "_ms",
        ms(first.doneAt() - first.startedAt()));
    long cpu = child.cpuMs();
    long kubeletCpu = ChildJvm.cpuMs(SELF_STAT);
    Readiness again = restartOnce(h, expected, classDevices);
    add(prefix + "kubelet_restart_recovery_" + n + "_ms", ms(again.doneAt() - again.startedAt()));
    add(prefix + "kubelet_restart_recovery_cpu_" + n + "_ms", child.cpuMs() - cpu);
    add(
        prefix + "kubelet_restart_recovery_kubelet_cpu_" + n + "_ms",
        ChildJvm.cpuMs(SELF_STAT) - kubeletCpu);
    add(prefix + "kubelet_restart_registrations_" + n, again.registrations());
    add(prefix + "kubelet_restart_rejections_" + n, again.rejections());
    add(prefix + "kubelet_restart_stream_ends_" + n, again.streamEnds());
    add(prefix + "kubelet_restart_snapshots_" + n, again.snapshots());
    add(prefix + "kubelet_restart_device_entries_" + n, again.deviceEntries());
  }

  private Readiness restartOnce(Harness h, int expected, int classDevices) throws Exception {
    Readiness again = new Readiness(expected, r -> r.equals("akri.sh/sim") ? classDevices : 1);
    h.emulator.addListener(again);
    again.started(System.nanoTime());
    h.emulator.restart();
    again.await(READY_TIMEOUT);
    h.emulator.removeListener(again);
    return again;
  }

  /** Allocate of one Instance slot vs GetDevicePluginOptions, same socket, same channel. */
  private void allocateLatency(Harness h) throws Exception {
    Path socket;
    try (Stream<Path> files = Files.list(h.dir)) {
      socket =
          files
              .filter(p -> p.getFileName().toString().matches("sim-[0-9a-f]{6}-\\d+\\.sock"))
              .findFirst()
              .orElseThrow();
    }
    String instance = socket.getFileName().toString().replaceAll("-\\d+\\.sock$", "");
    String slot = InstanceNames.slotId(instance, 0);
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(1);
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .build();
    try {
      DevicePluginGrpc.DevicePluginBlockingStub stub =
          DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(5, TimeUnit.MINUTES);
      AllocateRequest request =
          AllocateRequest.newBuilder()
              .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(slot))
              .build();
      int warmup = options.quick ? 500 : 2000;
      int measured = options.quick ? 1000 : 3000;
      for (int i = 0; i < warmup; i++) {
        stub.allocate(request);
        stub.getDevicePluginOptions(Empty.getDefaultInstance());
      }
      List<Double> allocate = new ArrayList<>();
      List<Double> noop = new ArrayList<>();
      for (int i = 0; i < measured; i++) {
        // Interleaved, so both see the same load.
        long t0 = System.nanoTime();
        stub.allocate(request);
        long t1 = System.nanoTime();
        stub.getDevicePluginOptions(Empty.getDefaultInstance());
        long t2 = System.nanoTime();
        allocate.add((t1 - t0) / 1000.0);
        noop.add((t2 - t1) / 1000.0);
      }
      add("allocate_standalone_p50_us", Stats.percentile(allocate, 50));
      add("allocate_standalone_p99_us", Stats.percentile(allocate, 99));
      add("noop_rpc_p50_us", Stats.percentile(noop, 50));
      add("noop_rpc_p99_us", Stats.percentile(noop, 99));
    } finally {
      channel.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  /**
   * Rewrites the {@code disc} Configuration with one device more, and times until the emulator sees
   * a ListAndWatch snapshot of the class resource {@code akri.sh/disc} with that many healthy
   * devices.
   */
  private void discoveryLatency(Harness h, Path config, Path log) throws Exception {
    int changes = options.quick ? 15 : 30;
    List<Double> latencies = new ArrayList<>();
    List<Double> fromAgent = new ArrayList<>();
    for (int k = 2; k < 2 + changes; k++) {
      int want = distinctInstances("disc", k);
      CountDownLatch seen = new CountDownLatch(1);
      java.util.concurrent.atomic.AtomicLong seenWallMs =
          new java.util.concurrent.atomic.AtomicLong();
      EmulatorListener listener =
          new EmulatorListener() {
            @Override
            public void snapshot(String resource, Map<String, String> devices) {
              if (resource.equals("akri.sh/disc")
                  && devices.values().stream().filter("Healthy"::equals).count() >= want
                  && seen.getCount() > 0) {
                seenWallMs.set(System.currentTimeMillis());
                seen.countDown();
              }
            }
          };
      h.emulator.addListener(listener);
      long t0 = System.nanoTime();
      writeSimulated(config.resolve("disc.yaml"), "disc", k);
      if (!seen.await(30, TimeUnit.SECONDS)) {
        throw new IllegalStateException("discovery change to " + k + " devices not advertised");
      }
      latencies.add(ms(System.nanoTime() - t0));
      h.emulator.removeListener(listener);
      lastLogTime(log, "configuration disc: changed")
          .ifPresent(at -> fromAgent.add((double) (seenWallMs.get() - at)));
    }
    add("config_file_to_advertised_p50_ms", Stats.percentile(latencies, 50));
    add("config_file_to_advertised_p99_ms", Stats.percentile(latencies, 99));
    add("discovery_to_advertised_p50_ms", Stats.percentile(fromAgent, 50));
    add("discovery_to_advertised_p99_ms", Stats.percentile(fromAgent, 99));
  }

  // ---------------------------------------------------------------- summary

  private void summarise() {
    String p = "allocate_standalone_";
    floor(p + "p50_us", "noop_rpc_p50_us", "us", "-");
    floor(p + "p99_us", "noop_rpc_p99_us", "us", "p99 <= 2x floor", 2.0);
    summariseCluster();
    summariseController();
    summariseFootprint();
    summariseShutdown();
    summariseSlowKubelet();
    fig("config_file_to_advertised_p50_ms", "ms", "(incl. 100 ms debounce)", Optional.empty());
    fig("config_file_to_advertised_p99_ms", "ms", "(incl. 100 ms debounce)", Optional.empty());
    fig("discovery_to_advertised_p50_ms", "ms", "-", Optional.empty());
    double disc99 = med("discovery_to_advertised_p99_ms");
    fig("discovery_to_advertised_p99_ms", "ms", "<= 50 ms", Optional.of(disc99 <= 50));
    fig("agent_start_to_3_instances_advertised_ms", "ms", "-", Optional.empty());
    fig("agent_cpu_to_3_instances_advertised_ms", "ms", "(CPU time)", Optional.empty());
    for (int n : options.sizes) {
      String a = "agent_start_to_" + n + "_instances_advertised_ms";
      double v = med(a);
      double f = med("floor_start_to_" + n + "_advertised_ms");
      boolean ok = v <= 2 * f && (n != 1000 || v <= 3000);
      figures.add(
          Figure.withFloor(
              a,
              v,
              f,
              "ms",
              n == 1000 ? "<= 2x floor, <= 3000 ms" : "<= 2x floor",
              Optional.of(ok)));
      floor(
          "agent_cpu_to_" + n + "_instances_advertised_ms",
          "floor_cpu_to_" + n + "_advertised_ms",
          "ms",
          "(CPU time; load-independent)");
      floor(
          "agent_first_to_last_registration_" + n + "_ms",
          "floor_first_to_last_registration_" + n + "_ms",
          "ms",
          "(diagnostic)");
    }
    if (samples.containsKey("kubelet_restart_recovery_1000_ms")) {
      double v = med("kubelet_restart_recovery_1000_ms");
      double f = med("floor_kubelet_restart_recovery_1000_ms");
      figures.add(
          Figure.withFloor(
              "kubelet_restart_recovery_1000_ms",
              v,
              f,
              "ms",
              "<= 1000 ms",
              Optional.of(v <= 1000)));
      floor(
          "kubelet_restart_recovery_cpu_1000_ms",
          "floor_kubelet_restart_recovery_cpu_1000_ms",
          "ms",
          "(CPU time; load-independent)");
      floor(
          "kubelet_restart_recovery_kubelet_cpu_1000_ms",
          "floor_kubelet_restart_recovery_kubelet_cpu_1000_ms",
          "ms",
          "(the emulator's CPU; diagnostic)");
      floor(
          "kubelet_restart_recovery_first_1000_ms",
          "floor_kubelet_restart_recovery_first_1000_ms",
          "ms",
          "(the child's first restart; diagnostic)");
    }
    double idle = med("agent_rss_idle_3_instances_mb");
    fig("agent_rss_idle_3_instances_mb", "MB", "<= 80 MB", Optional.of(idle <= 80));
    fig("agent_rss_idle_3_instances_after_gc_mb", "MB", "-", Optional.empty());
    fig("agent_heap_idle_mb", "MB", "-", Optional.empty());
    fig("agent_threads_idle", "threads", "-", Optional.empty());
    double idleHeap = med("agent_heap_idle_mb");
    for (int n : options.sizes) {
      figures.add(
          Figure.withFloor(
              "agent_rss_" + n + "_instances_mb",
              med("agent_rss_" + n + "_instances_mb"),
              med("floor_rss_" + n + "_mb"),
              "MB",
              "(floor = bare servers)",
              Optional.empty()));
      double perInstanceKb = (med("agent_heap_" + n + "_instances_mb") - idleHeap) * 1024 / (n - 3);
      figures.add(
          Figure.of(
              "agent_heap_per_instance_at_" + n + "_kb",
              perInstanceKb,
              "KB",
              "<= 20 KB",
              Optional.of(perInstanceKb <= 20)));
      double fds = med("agent_fds_" + n + "_instances");
      double perInstance = (fds - med("agent_fds_idle")) / (n - 3);
      figures.add(
          Figure.withFloor(
              "agent_fds_" + n + "_instances",
              fds,
              med("floor_fds_" + n),
              "fds",
              "(floor = bare servers)",
              Optional.empty()));
      figures.add(
          Figure.of(
              "agent_fds_per_instance_at_" + n,
              perInstance,
              "fds",
              "(listening socket + kubelet's connection)",
              Optional.empty()));
      fig(
          "kubelet_side_fds_" + n + "_instances",
          "fds",
          "(bench JVM, not the agent)",
          Optional.empty());
      figures.add(
          Figure.withFloor(
              "agent_threads_" + n + "_instances",
              med("agent_threads_" + n + "_instances"),
              med("floor_threads_" + n),
              "threads",
              "independent of N",
              Optional.of(
                  med("agent_threads_" + n + "_instances") <= med("agent_threads_idle") + 4)));
    }
  }

  /** One action of a scenario that may fail. */
  @FunctionalInterface
  private interface Scenario {
    void run() throws Exception;
  }

  private void attempt(String figure, Scenario scenario) {
    try {
      scenario.run();
    } catch (Exception e) {
      e.printStackTrace(System.out);
      notMeasured.put(figure, "failed: " + e.getMessage());
    }
  }

  /**
   * What the chart ships for the controller: the agent's recommended flags minus those measured for
   * the agent only (256 KB stacks, the 3 MB young generation, one compiler thread).
   */
  static final List<String> CONTROLLER_RECOMMENDED =
      AgentJvm.RECOMMENDED.stream()
          .filter(
              f ->
                  !f.startsWith("-Xss")
                      && !f.startsWith("-Xmn")
                      && !f.startsWith("-XX:CICompilerCount"))
          .toList();

  private int controllerInstances;
  private int shutdownInstances;
  private int slowKubeletInstances;

  private void summariseSlowKubelet() {
    if (!samples.containsKey("slow_kubelet_small_beside_big_advertise_ms")) {
      return;
    }
    floor(
        "slow_kubelet_small_beside_big_advertise_ms",
        "slow_kubelet_small_alone_advertise_ms",
        "ms",
        "(floor = alone, same slow kubelet)");
    fig(
        "slow_kubelet_big_" + slowKubeletInstances + "_advertise_ms",
        "ms",
        "(Register takes 100 ms)",
        Optional.empty());
    fig(
        "slow_kubelet_big_advertised_when_small_advertised_pct",
        "%",
        "(< 100: it did not wait)",
        Optional.empty());
  }

  private void summariseShutdown() {
    if (!samples.containsKey("agent_sigterm_to_exit_" + shutdownInstances + "_ms")) {
      return;
    }
    int n = shutdownInstances;
    String name = "agent_sigterm_to_exit_" + n + "_ms";
    double v = med(name);
    figures.add(
        Figure.withFloor(
            name,
            v,
            med("floor_sigterm_to_exit_" + n + "_ms"),
            "ms",
            "< chart grace (60 s), a few s",
            Optional.of(v < 60_000)));
    fig(
        "agent_shutdown_leftover_sockets_" + n,
        "sockets",
        "0 (floor: " + fmt(med("floor_shutdown_leftover_sockets_" + n)) + ")",
        Optional.of(med("agent_shutdown_leftover_sockets_" + n) == 0));
    fig(
        "agent_shutdown_leftover_cdi_specs_" + n,
        "files",
        "0",
        Optional.of(med("agent_shutdown_leftover_cdi_specs_" + n) == 0));
  }

  private void summariseController() {
    if (!samples.containsKey("controller_defaults_rss_idle_mb")) {
      return;
    }
    int n = controllerInstances;
    for (String label : List.of("defaults", "recommended")) {
      String c = "controller_" + label + "_";
      fig(c + "rss_idle_mb", "MB", "(sizes the chart's requests)", Optional.empty());
      fig(c + "rss_" + n + "_instances_mb", "MB", "(sizes the chart's limits)", Optional.empty());
      fig(c + "heap_" + n + "_instances_mb", "MB", "-", Optional.empty());
      fig(c + "threads_idle", "threads", "-", Optional.empty());
      fig(c + "threads_" + n + "_instances", "threads", "-", Optional.empty());
      fig(c + "burst_" + n + "_s", "s", "(Pod + Service per Instance)", Optional.empty());
      fig(c + "burst_" + n + "_cpu_s", "s", "(CPU time)", Optional.empty());
      // One thread per API request would be about 2n (a Pod and a Service per Instance).
      double started = med(c + "burst_" + n + "_threads_started");
      fig(
          c + "burst_" + n + "_threads_started",
          "threads",
          "< n/10 (none per request)",
          Optional.of(started < n / 10.0));
    }
  }

  private static final int FOOTPRINT_AGENT_INSTANCES = 1000;
  private static final int FOOTPRINT_CONTROLLER_INSTANCES = 500;

  /** Issue 29's targets, as the chart runs agent and controller, each beside its floor. */
  private void summariseFootprint() {
    if (!samples.containsKey("footprint_agent_rss_idle_mb")) {
      return;
    }
    String a = "footprint_agent_";
    String c = "footprint_controller_";
    int an = FOOTPRINT_AGENT_INSTANCES;
    int cn = FOOTPRINT_CONTROLLER_INSTANCES;
    below(a + "rss_idle_mb", a + "rss_idle_floor_mb", "MB", 56);
    below(a + "rss_" + an + "_instances_mb", a + "rss_" + an + "_instances_floor_mb", "MB", 90);
    below(c + "rss_idle_mb", c + "rss_idle_floor_mb", "MB", 64);
    below(c + "rss_" + cn + "_instances_mb", c + "rss_" + cn + "_instances_floor_mb", "MB", 96);
    below(a + "start_to_first_advertised_ms", a + "start_to_first_advertised_ms_floor", "ms", 700);
    below(c + "start_to_ready_ms", c + "start_to_ready_ms_floor", "ms", 1500);
    for (String label : List.of("idle", an + "_instances")) {
      floor(a + "threads_" + label, a + "threads_" + label + "_floor", "threads", "-");
      floor(a + "heap_" + label + "_mb", a + "heap_" + label + "_floor_mb", "MB", "-");
    }
    for (String label : List.of("idle", cn + "_instances")) {
      floor(c + "threads_" + label, c + "threads_" + label + "_floor", "threads", "-");
      floor(c + "heap_" + label + "_mb", c + "heap_" + label + "_floor_mb", "MB", "-");
    }
  }

  /** A figure beside its floor with an absolute target {@code <= max}. */
  private void below(String name, String floorName, String unit, double max) {
    double v = med(name);
    figures.add(
        Figure.withFloor(
            name, v, med(floorName), unit, "<= " + fmt(max) + " " + unit, Optional.of(v <= max)));
  }

  private void summariseCluster() {
    notMeasured.forEach(
        (name, why) ->
            figures.add(
                Figure.of(name, Double.NaN, "-", "not measured: " + why, Optional.empty())));
    if (samples.containsKey("allocate_cluster_p50_ms")) {
      floor("allocate_cluster_p50_ms", "get_put_floor_p50_ms", "ms", "-");
      floor("allocate_cluster_p99_ms", "get_put_floor_p99_ms", "ms", "p99 <= 1.5x floor", 1.5);
      String d = "(diagnostic)";
      fig("allocate_cluster_before_put_p50_ms", "ms", d, Optional.empty());
      fig("allocate_cluster_put_in_server_p50_ms", "ms", d, Optional.empty());
      fig("allocate_cluster_after_put_p50_ms", "ms", d, Optional.empty());
      fig("get_put_floor_in_server_p50_ms", "ms", d, Optional.empty());
      fig("get_put_floor_outside_server_p50_ms", "ms", d, Optional.empty());
      fig("allocate_cluster_agent_cpu_per_allocate_ms", "ms", d, Optional.empty());
      fig("allocate_cluster_agent_kernel_cpu_per_allocate_ms", "ms", d, Optional.empty());
      double started = med("allocate_cluster_agent_threads_started_per_allocate");
      fig(
          "allocate_cluster_agent_threads_started_per_allocate",
          "threads",
          "< 0.05 (none per request)",
          Optional.of(started < 0.05));
      fig(
          "allocate_cluster_alone_p50_ms",
          "ms",
          "(diagnostic: no floor between)",
          Optional.empty());
      fig(
          "allocate_cluster_alone_agent_cpu_per_allocate_ms",
          "ms",
          "(diagnostic: no floor between)",
          Optional.empty());
      fig("allocate_cluster_conflict_reads", "requests", "(0 expected)", Optional.empty());
    }
    if (samples.containsKey("fair_small_beside_big_advertise_ms")) {
      floor(
          "fair_small_beside_big_advertise_ms",
          "fair_small_alone_advertise_ms",
          "ms",
          "(floor = the same Configuration on the idle agent)");
      fig(
          "fair_big_instances_written_when_small_advertised",
          "Instances",
          "(of the big one's; < all: it did not wait)",
          Optional.empty());
    }
    if (samples.containsKey("zeroconf_publish_to_advertised_ms")) {
      double v = med("zeroconf_publish_to_advertised_ms");
      double f = med("jmdns_publish_to_resolved_ms");
      figures.add(
          Figure.withFloor(
              "zeroconf_publish_to_advertised_ms",
              v,
              f,
              "ms",
              "<= floor + 100 ms",
              Optional.of(v <= f + 100)));
    }
    if (samples.containsKey("mqtt_announce_to_advertised_ms")) {
      double v = med("mqtt_announce_to_advertised_ms");
      double f = med("paho_announce_to_received_ms");
      figures.add(
          Figure.withFloor(
              "mqtt_announce_to_advertised_ms",
              v,
              f,
              "ms",
              "<= floor + 100 ms",
              Optional.of(v <= f + 100)));
    }
    polled(
        "coap_appear_to_advertised_ms", "coap_client_appear_to_links_ms", "coap_round_period_ms");
    polled(
        "modbus_appear_to_advertised_ms", "modbus_bare_read_device_id_ms", "modbus_scan_period_ms");
    if (samples.containsKey("opcua_discovery_to_advertised_ms")) {
      double v = med("opcua_discovery_to_advertised_ms");
      double f = med("opcua_findservers_ms");
      figures.add(
          Figure.withFloor(
              "opcua_discovery_to_advertised_ms",
              v,
              f,
              "ms",
              "<= floor + 100 ms",
              Optional.of(v <= f + 100)));
    }
    if (samples.containsKey("opcua_stop_to_unhealthy_ms")) {
      double v = med("opcua_stop_to_unhealthy_ms");
      double f = med("opcua_findservers_refused_ms");
      figures.add(
          Figure.withFloor(
              "opcua_stop_to_unhealthy_ms",
              v,
              f,
              "ms",
              "<= poll interval (1 s) + floor + 100 ms",
              Optional.of(v <= 1000 + f + 100)));
    }
    if (samples.containsKey("opcua_silent240_heap_after_gc_mb")) {
      String t = "(floor = 1 silent URL, same agent)";
      floor("opcua_silent240_heap_after_gc_mb", "opcua_silent1_heap_after_gc_mb", "MB", t);
      floor("opcua_silent240_rss_mb", "opcua_silent1_rss_mb", "MB", t);
      floor("opcua_silent240_threads", "opcua_silent1_threads", "threads", t);
      double open = med("opcua_silent240_max_open_connections");
      figures.add(
          Figure.of(
              "opcua_silent240_max_open_connections",
              open,
              "connections",
              "<= 32 (the handler's bound)",
              Optional.of(open <= 32)));
      fig(
          "opcua_silent_removed_heap_after_gc_mb",
          "MB",
          "(back to the floor after removal)",
          Optional.empty());
    }
    if (samples.containsKey("udev_hotplug_to_advertised_ms")) {
      double v = med("udev_hotplug_to_advertised_ms");
      double f = med("udev_hotplug_node_visible_ms");
      figures.add(
          Figure.withFloor("udev_hotplug_to_advertised_ms", v, f, "ms", "-", Optional.empty()));
      double p99 = med("udev_hotplug_to_advertised_p99_ms");
      double p99f = med("udev_hotplug_node_visible_p99_ms");
      figures.add(
          Figure.withFloor(
              "udev_hotplug_to_advertised_p99_ms",
              p99,
              p99f,
              "ms",
              "<= 200 ms",
              Optional.of(p99 <= 200)));
    }
    if (samples.containsKey("api_writes_per_device")) {
      fig("api_writes_per_device", "writes", "O(1) per node", Optional.empty());
      double perNode = med("api_writes_per_device_per_node");
      fig("api_writes_per_device_per_node", "writes", "O(1)", Optional.of(perNode <= 2));
      fig("api_requests_per_device", "requests", "-", Optional.empty());
      fig(
          "api_instance_writes_per_device_per_node",
          "writes",
          "~1 (create or join)",
          Optional.empty());
      fig("api_configuration_status_writes_per_device", "writes", "-", Optional.empty());
      double perAllocate = med("api_requests_per_allocate");
      fig("api_requests_per_allocate", "requests", "O(1)", Optional.of(perAllocate <= 2));
      fig("api_writes_per_allocate", "writes", "-", Optional.empty());
      fig("api_requests_idle_10s", "requests", "(node sweep: 1/agent/min)", Optional.empty());
      double idle = med("api_requests_idle_10s_besides_node_sweep");
      fig(
          "api_requests_idle_10s_besides_node_sweep",
          "requests",
          "0 (no hot loop)",
          Optional.of(idle == 0));
      fig("cluster_writes_discovery_s", "s", "(diagnostic)", Optional.empty());
    }
  }

  /**
   * A polling handler's figure beside its floor (which polls in step with it, so both include the
   * same wait for the next round) and the round period measured in the same run.
   */
  private void polled(String name, String floorName, String periodName) {
    if (!samples.containsKey(name)) {
      return;
    }
    double v = med(name);
    double f = med(floorName);
    String period = "round " + fmt(med(periodName)) + " ms";
    figures.add(
        Figure.withFloor(
            name, v, f, "ms", "<= floor + 100 ms; " + period, Optional.of(v <= f + 100)));
    fig(periodName, "ms", "(the floor waits for the same rounds)", Optional.empty());
  }

  private void floor(String name, String floorName, String unit, String target) {
    figures.add(Figure.withFloor(name, med(name), med(floorName), unit, target, Optional.empty()));
  }

  private void floor(String name, String floorName, String unit, String target, double maxRatio) {
    double v = med(name);
    double f = med(floorName);
    figures.add(Figure.withFloor(name, v, f, unit, target, Optional.of(v <= maxRatio * f)));
  }

  private void fig(String name, String unit, String target, Optional<Boolean> met) {
    figures.add(Figure.of(name, med(name), unit, target, met));
  }

  private double med(String name) {
    return Stats.median(samples.getOrDefault(name, List.of()));
  }

  private void print() {
    System.out.println();
    String format = "%-48s %12s %12s %8s  %-26s %s%n";
    System.out.printf(format, "figure", "value", "floor", "ratio", "target", "met");
    for (Figure f : figures) {
      System.out.printf(
          format,
          f.name(),
          fmt(f.value()) + " " + f.unit(),
          f.floor().map(v -> fmt(v) + " " + f.unit()).orElse("-"),
          f.ratio().map(r -> String.format("%.2fx", r)).orElse("-"),
          f.target(),
          f.met().map(m -> m ? "yes" : "NO").orElse("-"));
    }
    System.out.println();
    for (Figure f : figures) {
      System.out.printf("BENCH %s %s %s%n", f.name(), fmt(f.value()), f.unit());
      f.floor()
          .ifPresent(v -> System.out.printf("BENCH %s_floor %s %s%n", f.name(), fmt(v), f.unit()));
      f.ratio().ifPresent(r -> System.out.printf("BENCH %s_ratio %.2f x%n", f.name(), r));
    }
    System.out.println();
    System.out.println("samples (every run):");
    samples.forEach(
        (k, v) -> System.out.printf("  %-52s %s%n", k, v.stream().map(Bench::fmt).toList()));
  }

  // ---------------------------------------------------------------- helpers

  void add(String name, double value) {
    samples.computeIfAbsent(name, k -> new ArrayList<>()).add(value);
    System.out.printf("  %s = %s%n", name, fmt(value));
  }

  /** Open file descriptors of this JVM (the kubelet emulator's side of every connection). */
  private static double selfOpenFiles() throws IOException {
    try (Stream<Path> fds = Files.list(Path.of("/proc/self/fd"))) {
      return fds.count();
    }
  }

  /** Lets a child's memory settle after a burst (RSS is read after this). */
  static void settle() throws InterruptedException {
    Thread.sleep(2000);
  }

  private static double ms(long nanos) {
    return nanos / 1_000_000.0;
  }

  private static String fmt(double v) {
    if (Double.isNaN(v)) {
      return "n/a";
    }
    return Math.abs(v) >= 100 ? String.format("%.0f", v) : String.format("%.2f", v);
  }

  /** How many distinct Instances N simulated devices on {@link #NODE} make (3-byte hashes). */
  static int distinctInstances(String configuration, int n) {
    Set<String> names = new HashSet<>();
    for (int i = 0; i < n; i++) {
      names.add(
          InstanceNames.instanceName(
              configuration, "simple-device-" + NODE + "-" + i, false, NODE));
    }
    return names.size();
  }

  private static void writeSimulated(Path file, String name, int count) throws IOException {
    Path tmp = file.resolveSibling("." + file.getFileName() + ".tmp");
    Files.writeString(
        tmp,
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + name
            + "\nspec:\n  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n"
            + "      count: "
            + count
            + "\n");
    Files.move(
        tmp,
        file,
        java.nio.file.StandardCopyOption.REPLACE_EXISTING,
        java.nio.file.StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * The wall-clock time (epoch ms) of the last agent log line containing {@code text}; the log
   * pattern starts with {@code HH:mm:ss.SSS} in local time, today.
   */
  static Optional<Long> lastLogTime(Path log, String text) throws IOException {
    List<String> lines = Files.readAllLines(log);
    for (int i = lines.size() - 1; i >= 0; i--) {
      String line = lines.get(i);
      if (line.contains(text) && line.length() > 12) {
        java.time.LocalTime time = java.time.LocalTime.parse(line.substring(0, 12));
        return Optional.of(
            java.time.LocalDate.now()
                .atTime(time)
                .atZone(java.time.ZoneId.systemDefault())
                .toInstant()
                .toEpochMilli());
      }
    }
    return Optional.empty();
  }

  static String loadAverage() {
    try {
      return Files.readString(Path.of("/proc/loadavg")).strip();
    } catch (IOException e) {
      return "?";
    }
  }

  private static void deleteTree(Path root) throws IOException {
    try (Stream<Path> paths = Files.walk(root)) {
      paths.sorted((a, b) -> b.getNameCount() - a.getNameCount()).forEach(p -> p.toFile().delete());
    }
  }

  /** The kubelet emulator (in this JVM) for one run, and how the agent is started against it. */
  private final class Harness implements AutoCloseable {
    final Path dir;
    final Path podResources;
    final KubeletEmulator emulator;
    final EventLoopGroup group;

    @SuppressWarnings("deprecation")
    Harness(Path root) throws IOException {
      dir = root.resolve("device-plugins");
      podResources = root.resolve("pod-resources").resolve("kubelet.sock");
      Files.createDirectories(podResources.getParent());
      // Two I/O threads: the kubelet (Go) uses every core for its plugin connections.
      group = new EpollEventLoopGroup(2);
      emulator =
          KubeletEmulator.builder(dir)
              .podResourcesSocket(podResources)
              .writeCheckpoint(false)
              .eventLoopGroup(group)
              .build();
      emulator.start();
    }

    ChildJvm startAgent(Path config, Path log) throws IOException {
      return startAgent(agentJvm, config, log);
    }

    ChildJvm startAgent(List<String> jvm, Path config, Path log) throws IOException {
      List<String> args = new ArrayList<>();
      args.add("-jar");
      args.add(options.agentJar.toString());
      args.addAll(
          List.of(
              "--standalone",
              "--config",
              config.toString(),
              "--node-name",
              NODE,
              "--device-plugin-dir",
              dir.toString(),
              "--pod-resources-socket",
              podResources.toString(),
              "--plugins-dir",
              options.plugins.toString(),
              // as deployed (the registration socket is served), never in the host's /var/lib/akri
              "--discovery-handlers-dir",
              dir.resolveSibling(dir.getFileName() + "-akri").toString()));
      return ChildJvm.start(jvm, options.agentEnv, args, log);
    }

    @Override
    public void close() {
      emulator.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).syncUninterruptibly();
    }
  }
}
