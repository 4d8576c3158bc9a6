package io.jakri.bench;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * SIGTERM to exit at N Instances: the agent standalone in its own JVM with the simulated handler
 * ({@code count: N}) and CDI on ({@code --cdi-dir} in the run directory), advertising to the
 * kubelet emulator in this JVM; once every Instance is advertised and every CDI spec written, the
 * agent gets SIGTERM and is timed until its process has exited. Then the sockets and specs left in
 * the two directories are counted (0 expected). Floor: {@link BareServers} with N bare servers and
 * N files of its own, advertised to the same kind of emulator, shut down by SIGTERM the least way
 * it can. Not thread-safe.
 */
final class ShutdownBench {

  /** Longer than any grace: a run that takes this long is reported, then killed. */
  private static final Duration MAX = Duration.ofSeconds(90);

  private static final Duration READY_TIMEOUT = Duration.ofMinutes(4);

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final List<String> floorJvm;
  private final BiConsumer<String, Double> add;

  ShutdownBench(
      Bench.Options options,
      Path work,
      List<String> agentJvm,
      List<String> floorJvm,
      BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.floorJvm = floorJvm;
    this.add = add;
  }

  /** The agent with N simulated devices and CDI on, until it exited after SIGTERM. */
  void agentRun(int n, int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("shutdown-" + n + "-" + run));
    Path config = Files.createDirectories(root.resolve("config"));
    Path cdi = root.resolve("cdi");
    Files.writeString(
        config.resolve("sim.yaml"),
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: sim\nspec:\n"
            + "  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n"
            + "      count: "
            + n
            + "\n");
    int distinct = Bench.distinctInstances("sim", n);
    Readiness ready = new Readiness(distinct + 1, r -> r.equals("akri.sh/sim") ? distinct : 1);
    try (HandlerAgentRun run1 =
        HandlerAgentRun.start(
            options,
            agentJvm,
            root,
            config,
            options.plugins(),
            ready,
            "--cdi",
            "--cdi-dir",
            cdi.toString())) {
      ready.await(READY_TIMEOUT);
      awaitFiles(cdi, distinct, run1.agent());
      long cpu = run1.agent().cpuMs();
      OptionalLong took = run1.agent().terminate(MAX);
      add.accept(
          "agent_sigterm_to_exit_" + n + "_ms",
          took.isPresent() ? took.getAsLong() / 1e6 : Double.NaN);
      add.accept("agent_shutdown_leftover_sockets_" + n, (double) sockets(run1.devicePluginDir()));
      add.accept("agent_shutdown_leftover_cdi_specs_" + n, (double) count(cdi));
      add.accept("agent_cpu_before_sigterm_" + n + "_ms", (double) cpu);
      add.accept("agent_shutdown_cpu_" + n + "_ms", stopCpuMs(run1.log()));
    }
  }

  /** {@link BareServers} with N servers and N files, until it exited after SIGTERM. */
  void floorRun(int n, int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("shutdown-floor-" + n + "-" + run));
    Path files = root.resolve("files");
    Path dir = root.resolve("dp");
    Path podResources = Files.createDirectories(root.resolve("pr")).resolve("kubelet.sock");
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(2);
    Readiness ready = new Readiness(n, r -> 1);
    try (KubeletEmulator kubelet =
        KubeletEmulator.builder(dir)
            .podResourcesSocket(podResources)
            .writeCheckpoint(false)
            .eventLoopGroup(group)
            .build()) {
      kubelet.addListener(ready);
      kubelet.start();
      ChildJvm floor =
          ChildJvm.start(
              floorJvm,
              options.agentEnv(),
              List.of(
                  "-cp",
                  options.benchClasspath() + ":" + options.agentJar(),
                  BareServers.class.getName(),
                  dir.toString(),
                  Integer.toString(n),
                  files.toString()),
              root.resolve("floor.log"));
      try {
        ready.await(READY_TIMEOUT);
        awaitFiles(files, n, floor);
        OptionalLong took = floor.terminate(MAX);
        add.accept(
            "floor_sigterm_to_exit_" + n + "_ms",
            took.isPresent() ? took.getAsLong() / 1e6 : Double.NaN);
        add.accept("floor_shutdown_leftover_sockets_" + n, (double) sockets(dir));
        add.accept("floor_shutdown_leftover_files_" + n, (double) count(files));
        add.accept("floor_shutdown_cpu_" + n + "_ms", stopCpuMs(floor.log()));
      } finally {
        floor.close();
      }
    } finally {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }

  private static final Pattern STOPPED = Pattern.compile("stopped in \\d+ ms \\((\\d+) ms CPU\\)");

  /**
   * The CPU time the child's shutdown took, from its last line {@code stopped in <ms> ms (<ms> ms
   * CPU)} (the agent's and {@link BareServers}'); NaN without one.
   */
  private static double stopCpuMs(Path log) throws IOException {
    double cpu = Double.NaN;
    for (String line : Files.readAllLines(log)) {
      Matcher m = STOPPED.matcher(line);
      if (m.find()) {
        cpu = Double.parseDouble(m.group(1));
      }
    }
    return cpu;
  }

  /** Waits (up to 60 s, polling every 50 ms) until {@code dir} holds {@code n} files. */
  private static void awaitFiles(Path dir, int n, ChildJvm child) throws Exception {
    long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
    while (count(dir) < n) {
      if (System.nanoTime() > deadline || !child.alive()) {
        throw new IllegalStateException(
            "only " + count(dir) + " of " + n + " files in " + dir + "; see " + child.log());
      }
      Thread.sleep(50);
    }
  }

  private static long count(Path dir) throws IOException {
    if (!Files.isDirectory(dir)) {
      return 0;
    }
    try (Stream<Path> files = Files.list(dir)) {
      return files.count();
    }
  }

  /** Sockets in the device-plugin dir other than the kubelet's. */
  private static long sockets(Path dir) throws IOException {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> !p.getFileName().toString().equals("kubelet.sock")).count();
    }
  }
}
