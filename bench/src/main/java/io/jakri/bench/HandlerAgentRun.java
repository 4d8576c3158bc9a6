package io.jakri.bench;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.UnaryOperator;
import java.util.stream.Stream;

/**
 * The agent under a handler bench: standalone in its own JVM with one handler plugin and its
 * Configuration directory under {@code root}, advertising to a kubelet emulator in this JVM whose
 * snapshots go to the bench's listener. Closing stops the agent, then the emulator. Not
 * thread-safe.
 */
final class HandlerAgentRun implements AutoCloseable {

  private static final long AWAIT_SECONDS = 60;

  private final EventLoopGroup group;
  private final KubeletEmulator emulator;
  private final ChildJvm agent;

  private HandlerAgentRun(EventLoopGroup group, KubeletEmulator emulator, ChildJvm agent) {
    this.group = group;
    this.emulator = emulator;
    this.agent = agent;
  }

  /**
   * Copies {@code jakri-handler-<handler>.jar} into {@code root/plugins}: the plugin as built in
   * {@code handlers/<handler>/target}, else the agent's copy. Returns that directory.
   */
  static Path plugins(Bench.Options options, Path root, String handler) throws IOException {
    Path dir = Files.createDirectories(root.resolve("plugins"));
    String name = "jakri-handler-" + handler;
    Path built =
        options
            .agentJar()
            .getParent()
            .getParent()
            .getParent()
            .resolve("handlers/" + handler)
            .resolve("target");
    Optional<Path> jar = Optional.empty();
    if (Files.isDirectory(built)) {
      try (Stream<Path> files = Files.list(built)) {
        jar =
            files
                .filter(p -> p.getFileName().toString().matches(name + "-[^-]+(-SNAPSHOT)?\\.jar"))
                .findFirst();
      }
    }
    Path source = jar.orElse(options.plugins().resolve(name + ".jar"));
    Files.copy(source, dir.resolve(name + ".jar"), StandardCopyOption.REPLACE_EXISTING);
    return dir;
  }

  /**
   * Writes Configuration {@code name} (capacity 1) for {@code handler} with {@code details} (YAML,
   * one line per setting) into {@code config}, atomically.
   */
  static void writeConfiguration(Path config, String name, String handler, String details)
      throws IOException {
    Path tmp = config.resolve("." + name + ".tmp");
    Files.writeString(
        tmp,
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + name
            + "\nspec:\n  capacity: 1\n  discoveryHandler:\n    name: "
            + handler
            + "\n    discoveryDetails: |\n"
            + details.lines().map(l -> "      " + l + "\n").reduce("", String::concat));
    Files.move(
        tmp,
        config.resolve(name + ".yaml"),
        StandardCopyOption.REPLACE_EXISTING,
        StandardCopyOption.ATOMIC_MOVE);
  }

  /**
   * A listener noting in {@code at} when the emulator first saw {@code resource} (a class resource,
   * {@code akri.sh/<configuration>}) with each number of healthy devices ({@link
   * System#nanoTime()}).
   */
  static EmulatorListener healthyCounts(String resource, Map<Integer, Long> at) {
    return new EmulatorListener() {
      @Override
      public void snapshot(String name, Map<String, String> devices) {
        if (name.equals(resource)) {
          int healthy = (int) devices.values().stream().filter("Healthy"::equals).count();
          at.putIfAbsent(healthy, System.nanoTime());
        }
      }
    };
  }

  /**
   * Starts the emulator (device plugins in {@code root/dp}, pod resources in {@code root/pr}) with
   * {@code listener}, then the agent on {@code config} and {@code plugins}, logging to {@code
   * root/agent.log}, with {@code extraArgs} after the usual flags.
   */
  static HandlerAgentRun start(
      Bench.Options options,
      List<String> agentJvm,
      Path root,
      Path config,
      Path plugins,
      EmulatorListener listener,
      String... extraArgs)
      throws IOException {
    return start(options, agentJvm, root, config, plugins, listener, b -> b, extraArgs);
  }

  /** As above, with the emulator built with {@code kubelet} applied (e.g. a slow Register). */
  static HandlerAgentRun start(
      Bench.Options options,
      List<String> agentJvm,
      Path root,
      Path config,
      Path plugins,
      EmulatorListener listener,
      UnaryOperator<KubeletEmulator.Builder> kubelet,
      String... extraArgs)
      throws IOException {
    Path dir = root.resolve("dp");
    Path podResources = Files.createDirectories(root.resolve("pr")).resolve("kubelet.sock");
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(2);
    KubeletEmulator emulator;
    try {
      emulator =
          kubelet
              .apply(
                  KubeletEmulator.builder(dir)
                      .podResourcesSocket(podResources)
                      .writeCheckpoint(false)
                      .eventLoopGroup(group))
              .build();
      emulator.addListener(listener);
      emulator.start();
    } catch (IOException | RuntimeException e) {
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
    List<String> args =
        new ArrayList<>(
            List.of(
                "-jar",
                options.agentJar().toString(),
                "--standalone",
                "--config",
                config.toString(),
                "--node-name",
                "bench-node",
                "--device-plugin-dir",
                dir.toString(),
                "--pod-resources-socket",
                podResources.toString(),
                "--plugins-dir",
                plugins.toString(),
                // as deployed (the registration socket is served), never in the host's
                // /var/lib/akri
                "--discovery-handlers-dir",
                root.resolve("akri").toString()));
    args.addAll(List.of(extraArgs));
    try {
      ChildJvm agent =
          ChildJvm.start(agentJvm, options.agentEnv(), args, root.resolve("agent.log"));
      return new HandlerAgentRun(group, emulator, agent);
    } catch (IOException | RuntimeException e) {
      emulator.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      throw e;
    }
  }

  /** The kubelet emulator the agent advertises to. */
  KubeletEmulator emulator() {
    return emulator;
  }

  /** The agent's JVM. */
  ChildJvm agent() {
    return agent;
  }

  /** The device-plugin directory the agent serves in. */
  Path devicePluginDir() {
    return emulator.devicePluginDir();
  }

  /** The agent's log file. */
  Path log() {
    return agent.log();
  }

  /**
   * Polls {@code done} every millisecond; throws naming {@code what} and the agent's log after 60 s
   * or when the agent exits.
   */
  void await(BooleanSupplier done, String what) throws InterruptedException {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(AWAIT_SECONDS);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException(
            what + " not seen in " + AWAIT_SECONDS + " s; see " + agent.log());
      }
      if (!agent.alive()) {
        throw new IllegalStateException("agent exited; see " + agent.log());
      }
      Thread.sleep(1);
    }
  }

  @Override
  public void close() throws InterruptedException {
    try {
      agent.close();
    } finally {
      emulator.close();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
    }
  }
}
