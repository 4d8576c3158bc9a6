package io.jakri.bench;

import io.jakri.handler.opcua.SilentServers;
import io.jakri.kubelet.emulator.EmulatorListener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * OPC UA polling of silent URLs (issue 26 item 6): the agent (standalone, its own JVM, the opcua
 * plugin) polling 240 loopback endpoints that never answer ({@link SilentServers} from the opcua
 * handler's test-jar: 200 accept and never send a byte, 40 never accept), split over 15
 * Configurations with {@code pollIntervalSeconds: 1}, for 64 s. Every 8 s: the agent's heap after a
 * full GC, RSS and threads; the connections the agent holds open are counted by the servers. Floor,
 * in the same agent just before: one Configuration polling one silent URL (the plugin and Milo
 * loaded and exercised), measured the same way. Then every Configuration is removed and the heap
 * after GC measured again, at once and 10 s later. Not thread-safe.
 *
 * <ul>
 *   <li>{@code opcua_silent240_heap_after_gc_mb}: the largest of the samples, against {@code
 *       opcua_silent1_heap_after_gc_mb}.
 *   <li>{@code opcua_silent240_rss_mb}: the largest RSS sample, against the floor's RSS.
 *   <li>{@code opcua_silent240_max_open_connections}: the most connections open at once (the
 *       handler's bound is 32).
 *   <li>{@code opcua_silent240_threads}, {@code opcua_silent_removed_heap_after_gc_mb} (10 s after
 *       the removal).
 * </ul>
 */
final class OpcuaSilentBench {

  private static final int SILENT = 200;
  private static final int UNREACHABLE = 40;
  private static final int CONFIGURATIONS = 15;
  private static final long SECONDS = 64;
  private static final long SAMPLE_SECONDS = 8;
  private static final long REMOVED_SETTLE_SECONDS = 10;

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  OpcuaSilentBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  void run(int runIndex) throws Exception {
    Path root = Files.createDirectories(work.resolve("opcua-silent-" + runIndex));
    Path plugins = HandlerAgentRun.plugins(options, root, "opcua");
    Path config = Files.createDirectories(root.resolve("config"));
    EmulatorListener quiet =
        new EmulatorListener() {
          @Override
          public void snapshot(String resource, Map<String, String> devices) {}
        };
    try (SilentServers servers = SilentServers.start(SILENT + 1, UNREACHABLE);
        HandlerAgentRun agent =
            HandlerAgentRun.start(options, agentJvm, root, config, plugins, quiet)) {
      List<String> urls = new ArrayList<>(servers.silentUrls());
      String floorUrl = urls.remove(urls.size() - 1);
      urls.addAll(servers.unreachableUrls());

      // Floor: one silent URL, polled until it has failed three times.
      write(config, "opcsilentfloor", List.of(floorUrl));
      agent.await(() -> servers.accepted() >= 3, "opcua silent: floor polls");
      ChildJvm jvm = agent.agent();
      double floorHeap = jvm.heapAfterGcBytes() / 1e6;
      double floorRss = jvm.rssKb() / 1e3;
      long floorThreads = jvm.threads();
      Files.delete(config.resolve("opcsilentfloor.yaml"));
      agent.await(() -> servers.open() == 0, "opcua silent: floor removed");

      int acceptedBefore = servers.accepted();
      for (int c = 0; c < CONFIGURATIONS; c++) {
        List<String> mine = new ArrayList<>();
        for (int i = c; i < urls.size(); i += CONFIGURATIONS) {
          mine.add(urls.get(i));
        }
        write(config, "opcsilent" + c, mine);
      }
      long start = System.nanoTime();
      double maxHeap = 0;
      double maxRss = 0;
      long maxThreads = 0;
      List<String> trace = new ArrayList<>();
      for (long s = SAMPLE_SECONDS; s <= SECONDS; s += SAMPLE_SECONDS) {
        long due = start + TimeUnit.SECONDS.toNanos(s);
        agent.await(() -> System.nanoTime() >= due, "opcua silent: " + due);
        double heap = jvm.heapAfterGcBytes() / 1e6;
        double rss = jvm.rssKb() / 1e3;
        long threads = jvm.threads();
        maxHeap = Math.max(maxHeap, heap);
        maxRss = Math.max(maxRss, rss);
        maxThreads = Math.max(maxThreads, threads);
        trace.add(String.format("%ds heap %.1f rss %.1f open %d", s, heap, rss, servers.open()));
      }
      int polls = servers.accepted() - acceptedBefore;
      int maxOpen = servers.maxOpen();
      for (int c = 0; c < CONFIGURATIONS; c++) {
        Files.delete(config.resolve("opcsilent" + c + ".yaml"));
      }
      agent.await(() -> servers.open() == 0, "opcua silent: Configurations removed");
      double removedAtOnceHeap = jvm.heapAfterGcBytes() / 1e6;
      // The shared I/O loop stops within 1 s of the last close; its channels go with it.
      long settled = System.nanoTime() + TimeUnit.SECONDS.toNanos(REMOVED_SETTLE_SECONDS);
      agent.await(() -> System.nanoTime() >= settled, "opcua silent: settle");
      double removedHeap = jvm.heapAfterGcBytes() / 1e6;
      System.out.printf(
          "  opcua silent (run %d): floor heap %.1f MB rss %.1f MB threads %d; 240 URLs: %s;"
              + " %d connections accepted, at most %d open; removed: heap %.1f MB at once, %.1f MB"
              + " %d s later%n",
          runIndex,
          floorHeap,
          floorRss,
          floorThreads,
          trace,
          polls,
          maxOpen,
          removedAtOnceHeap,
          removedHeap,
          REMOVED_SETTLE_SECONDS);
      add.accept("opcua_silent240_heap_after_gc_mb", maxHeap);
      add.accept("opcua_silent1_heap_after_gc_mb", floorHeap);
      add.accept("opcua_silent240_rss_mb", maxRss);
      add.accept("opcua_silent1_rss_mb", floorRss);
      add.accept("opcua_silent240_threads", (double) maxThreads);
      add.accept("opcua_silent1_threads", (double) floorThreads);
      add.accept("opcua_silent240_max_open_connections", (double) maxOpen);
      add.accept("opcua_silent_removed_heap_after_gc_mb", removedHeap);
    }
  }

  private static void write(Path config, String name, List<String> urls) throws IOException {
    StringBuilder yaml =
        new StringBuilder(
            "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
                + name
                + "\nspec:\n  capacity: 1\n  discoveryHandler:\n    name: opcua\n"
                + "    discoveryDetails: |\n      opcuaDiscoveryMethod:\n        standard:\n"
                + "          discoveryUrls:\n");
    for (String url : urls) {
      yaml.append("          - \"").append(url).append("\"\n");
    }
    yaml.append("      pollIntervalSeconds: 1\n");
    Path tmp = config.resolve("." + name + ".tmp");
    Files.writeString(tmp, yaml);
    Files.move(tmp, config.resolve(name + ".yaml"), StandardCopyOption.ATOMIC_MOVE);
  }
}
