package io.jakri.bench;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.handler.zeroconf.AvahiPeer;
import io.jakri.handler.zeroconf.BareJmdns;
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
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import java.util.stream.Stream;

/**
 * Zeroconf publish → advertised: a service published with {@code avahi-publish -s} (an avahi-daemon
 * in a network namespace, {@link AvahiPeer}) until the agent (standalone, its own JVM, the zeroconf
 * handler plugin) advertises it to the kubelet emulator in this JVM; floor: bare JmDNS (the version
 * the handler shades) in this JVM resolving the same service, timed from the same moment. Not
 * thread-safe.
 */
final class ZeroconfBench {

  private static final String TYPE = "_jkbench._tcp";
  private static final String RESOURCE = "akri.sh/zc";

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  ZeroconfBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Measures, or returns why it could not (avahi missing, not root). */
  Optional<String> run(int publishes) throws Exception {
    Path root = Files.createDirectories(work.resolve("zc"));
    AvahiPeer peer;
    try {
      peer = AvahiPeer.start();
    } catch (AvahiPeer.Unavailable e) {
      return Optional.of(e.getMessage());
    }
    try (peer) {
      Path plugins = plugins(root);
      Path config = Files.createDirectories(root.resolve("config"));
      Files.writeString(
          config.resolve("zc.yaml"),
          "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: zc\nspec:\n"
              + "  capacity: 1\n  discoveryHandler:\n    name: zeroconf\n    discoveryDetails: |\n"
              + "      kind: "
              + TYPE
              + "\n      interfaces: ["
              + peer.hostAddress()
              + "]\n");
      Path dir = root.resolve("dp");
      Path podResources = Files.createDirectories(root.resolve("pr")).resolve("kubelet.sock");
      @SuppressWarnings("deprecation")
      EventLoopGroup group = new EpollEventLoopGroup(2);
      Map<Integer, Long> advertisedAt = new ConcurrentHashMap<>();
      KubeletEmulator emulator =
          KubeletEmulator.builder(dir)
              .podResourcesSocket(podResources)
              .writeCheckpoint(false)
              .eventLoopGroup(group)
              .build();
      emulator.addListener(
          new EmulatorListener() {
            @Override
            public void snapshot(String resource, Map<String, String> devices) {
              if (resource.equals(RESOURCE)) {
                int healthy = (int) devices.values().stream().filter("Healthy"::equals).count();
                advertisedAt.putIfAbsent(healthy, System.nanoTime());
              }
            }
          });
      emulator.start();
      BareJmdns jmdns = new BareJmdns(peer.hostAddress(), TYPE);
      List<String> args =
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
              "--discovery-handlers-dir",
              root.resolve("akri").toString());
      try (ChildJvm agent =
          ChildJvm.start(agentJvm, options.agentEnv(), args, root.resolve("agent.log"))) {
        // Both browsers up and answering before timing starts: one service seen by both.
        // Published services end with the peer.
        peer.publish("warm-up", TYPE, 9000, List.of());
        await(() -> advertisedAt.containsKey(1) && jmdns.resolvedAt("warm-up").isPresent(), agent);
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        for (int k = 1; k <= publishes; k++) {
          String name = "svc-" + k;
          int want = k + 1;
          long t0 = peer.publish(name, TYPE, 9000 + k, List.of()).startedNanos;
          await(() -> advertisedAt.containsKey(want) && jmdns.resolvedAt(name).isPresent(), agent);
          handler.add((advertisedAt.get(want) - t0) / 1e6);
          floor.add((jmdns.resolvedAt(name).orElseThrow() - t0) / 1e6);
        }
        System.out.printf("  zeroconf: agent %s ms, bare JmDNS %s ms%n", handler, floor);
        add.accept("zeroconf_publish_to_advertised_ms", Stats.median(handler));
        add.accept("jmdns_publish_to_resolved_ms", Stats.median(floor));
      } finally {
        jmdns.close();
        emulator.close();
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
      }
    }
    return Optional.empty();
  }

  /** The zeroconf plugin as built in handlers/zeroconf/target, else the agent's copy. */
  private Path plugins(Path root) throws IOException {
    Path dir = Files.createDirectories(root.resolve("plugins"));
    Path built =
        options.agentJar().getParent().getParent().getParent().resolve("handlers/zeroconf/target");
    Optional<Path> jar = Optional.empty();
    if (Files.isDirectory(built)) {
      try (Stream<Path> files = Files.list(built)) {
        jar =
            files
                .filter(
                    p ->
                        p.getFileName()
                            .toString()
                            .matches("jakri-handler-zeroconf-[^-]+(-SNAPSHOT)?\\.jar"))
                .findFirst();
      }
    }
    Path source = jar.orElse(options.plugins().resolve("jakri-handler-zeroconf.jar"));
    Files.copy(
        source, dir.resolve("jakri-handler-zeroconf.jar"), StandardCopyOption.REPLACE_EXISTING);
    return dir;
  }

  private static void await(java.util.function.BooleanSupplier done, ChildJvm agent)
      throws Exception {
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
    while (!done.getAsBoolean()) {
      if (System.nanoTime() > deadline) {
        throw new IllegalStateException("zeroconf service not seen in 60 s; see " + agent.log());
      }
      if (!agent.alive()) {
        throw new IllegalStateException("agent exited; see " + agent.log());
      }
      Thread.sleep(2);
    }
  }
}
