package io.jakri.bench;

import io.jakri.handler.zeroconf.AvahiPeer;
import io.jakri.handler.zeroconf.BareJmdns;
import io.jakri.kubelet.emulator.EmulatorListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

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
      Path plugins = HandlerAgentRun.plugins(options, root, "zeroconf");
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
      Map<Integer, Long> advertisedAt = new ConcurrentHashMap<>();
      EmulatorListener listener =
          new EmulatorListener() {
            @Override
            public void snapshot(String resource, Map<String, String> devices) {
              if (resource.equals(RESOURCE)) {
                int healthy = (int) devices.values().stream().filter("Healthy"::equals).count();
                advertisedAt.putIfAbsent(healthy, System.nanoTime());
              }
            }
          };
      try (HandlerAgentRun agent =
              HandlerAgentRun.start(options, agentJvm, root, config, plugins, listener);
          BareJmdns jmdns = new BareJmdns(peer.hostAddress(), TYPE)) {
        // Both browsers up and answering before timing starts: one service seen by both.
        // Published services end with the peer.
        peer.publish("warm-up", TYPE, 9000, List.of());
        agent.await(
            () -> advertisedAt.containsKey(1) && jmdns.resolvedAt("warm-up").isPresent(),
            "zeroconf service");
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        for (int k = 1; k <= publishes; k++) {
          String name = "svc-" + k;
          int want = k + 1;
          long t0 = peer.publish(name, TYPE, 9000 + k, List.of()).startedNanos;
          agent.await(
              () -> advertisedAt.containsKey(want) && jmdns.resolvedAt(name).isPresent(),
              "zeroconf service");
          handler.add((advertisedAt.get(want) - t0) / 1e6);
          floor.add((jmdns.resolvedAt(name).orElseThrow() - t0) / 1e6);
        }
        System.out.printf("  zeroconf: agent %s ms, bare JmDNS %s ms%n", handler, floor);
        add.accept("zeroconf_publish_to_advertised_ms", Stats.median(handler));
        add.accept("jmdns_publish_to_resolved_ms", Stats.median(floor));
      }
    }
    return Optional.empty();
  }
}
