package io.jakri.bench;

import io.jakri.handler.opcua.OpcuaPeers;
import io.jakri.kubelet.emulator.EmulatorListener;
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
import org.eclipse.milo.opcua.stack.client.DiscoveryClient;

/**
 * OPC UA discovery → advertised and stop → Unhealthy: the agent (standalone, its own JVM, the opcua
 * handler plugin) polling a real node-opcua server ({@link OpcuaPeers}) with {@code
 * pollIntervalSeconds: 1}, against the kubelet emulator in this JVM. Floor: FindServers' own round
 * trip with Eclipse Milo (unshaded, the version the handler shades) in this JVM on a new
 * connection, as the handler makes one per request: to the live server for discovery, to the
 * stopped server's port (refused) for stop. Not thread-safe.
 *
 * <ul>
 *   <li>{@code opcua_discovery_to_advertised_ms}: from the agent's log line {@code opcua(<c>):
 *       polling} (the discovery started, wall clock ms) until the emulator's ListAndWatch snapshot
 *       of {@code akri.sh/<c>} shows the server healthy; a new Configuration each time.
 *   <li>{@code opcua_stop_to_unhealthy_ms}: from killing the server until the snapshot shows it
 *       Unhealthy. It includes waiting for the next poll (uniform in [0, 1 s]).
 * </ul>
 */
final class OpcuaBench {

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  OpcuaBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Measures, or returns why it could not (node or node-opcua missing). */
  Optional<String> run(int discoveries, int stops) throws Exception {
    Path root = Files.createDirectories(work.resolve("opcua"));
    OpcuaPeers peers;
    try {
      peers = OpcuaPeers.create();
    } catch (OpcuaPeers.Unavailable e) {
      return Optional.of(e.getMessage());
    }
    try (peers) {
      OpcuaPeers.Peer server = peers.server("bench-plc", Optional.empty(), Optional.empty());
      peers.awaitReady(server);
      Path plugins = HandlerAgentRun.plugins(options, root, "opcua");
      Path config = Files.createDirectories(root.resolve("config"));
      writeConfiguration(config, "opcwarm", server.url());
      Map<String, Long> healthyAt = new ConcurrentHashMap<>();
      Map<String, Long> unhealthyAt = new ConcurrentHashMap<>();
      Map<String, Long> healthyWallMs = new ConcurrentHashMap<>();
      EmulatorListener listener =
          new EmulatorListener() {
            @Override
            public void snapshot(String resource, Map<String, String> devices) {
              if (!resource.startsWith("akri.sh/opc") || resource.indexOf('-') >= 0) {
                return; // class resources only (akri.sh/<configuration>)
              }
              if (devices.containsValue("Healthy")) {
                healthyAt.putIfAbsent(resource, System.nanoTime());
                healthyWallMs.putIfAbsent(resource, System.currentTimeMillis());
              }
              if (devices.containsValue("Unhealthy")) {
                unhealthyAt.putIfAbsent(resource, System.nanoTime());
              }
            }
          };
      try (HandlerAgentRun agent =
          HandlerAgentRun.start(options, agentJvm, root, config, plugins, listener)) {
        Path log = agent.log();
        agent.await(() -> healthyAt.containsKey("akri.sh/opcwarm"), "opcua: warm-up server");
        // Floor warm-up: Milo's classes loaded and compiled a little, as the agent's are by now.
        for (int i = 0; i < 5; i++) {
          DiscoveryClient.findServers(server.url()).get(10, TimeUnit.SECONDS);
        }
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        for (int k = 1; k <= discoveries; k++) {
          String name = "opcd" + k;
          String resource = "akri.sh/" + name;
          writeConfiguration(config, name, server.url());
          agent.await(() -> healthyAt.containsKey(resource), "opcua: " + name);
          Optional<Long> started = Bench.lastLogTime(log, "opcua(" + name + "): polling");
          if (started.isEmpty()) {
            throw new IllegalStateException("no 'opcua(" + name + "): polling' line in " + log);
          }
          handler.add((double) (healthyWallMs.get(resource) - started.get()));
          long t0 = System.nanoTime();
          DiscoveryClient.findServers(server.url()).get(10, TimeUnit.SECONDS);
          floor.add((System.nanoTime() - t0) / 1e6);
        }
        System.out.printf(
            "  opcua discovery: agent %s ms, Milo FindServers %s ms%n", handler, floor);
        add.accept("opcua_discovery_to_advertised_ms", Stats.median(handler));
        add.accept("opcua_findservers_ms", Stats.median(floor));

        List<Double> stopped = new ArrayList<>();
        List<Double> refused = new ArrayList<>();
        for (int k = 1; k <= stops; k++) {
          OpcuaPeers.Peer victim =
              peers.server("bench-stop-" + k, Optional.empty(), Optional.empty());
          peers.awaitReady(victim);
          String name = "opcs" + k;
          String resource = "akri.sh/" + name;
          writeConfiguration(config, name, victim.url());
          agent.await(() -> healthyAt.containsKey(resource), "opcua: " + name);
          long t0 = System.nanoTime();
          victim.kill();
          agent.await(() -> unhealthyAt.containsKey(resource), "opcua: " + name + " unhealthy");
          stopped.add((unhealthyAt.get(resource) - t0) / 1e6);
          long t1 = System.nanoTime();
          try {
            DiscoveryClient.findServers(victim.url()).get(10, TimeUnit.SECONDS);
          } catch (java.util.concurrent.ExecutionException expected) {
            // refused: that is the floor
          }
          refused.add((System.nanoTime() - t1) / 1e6);
        }
        System.out.printf(
            "  opcua stop: agent %s ms (poll interval 1 s), refused FindServers %s ms%n",
            stopped, refused);
        add.accept("opcua_stop_to_unhealthy_ms", Stats.median(stopped));
        add.accept("opcua_findservers_refused_ms", Stats.median(refused));
      }
    }
    return Optional.empty();
  }

  private static void writeConfiguration(Path config, String name, String url) throws IOException {
    Path tmp = config.resolve("." + name + ".tmp");
    Files.writeString(
        tmp,
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + name
            + "\nspec:\n  capacity: 1\n  discoveryHandler:\n    name: opcua\n"
            + "    discoveryDetails: |\n      opcuaDiscoveryMethod:\n        standard:\n"
            + "          discoveryUrls: [\""
            + url
            + "\"]\n      pollIntervalSeconds: 1\n");
    Files.move(tmp, config.resolve(name + ".yaml"), StandardCopyOption.ATOMIC_MOVE);
  }
}
