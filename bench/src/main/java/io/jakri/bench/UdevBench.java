package io.jakri.bench;

import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.EmulatorListener;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.BiConsumer;

/**
 * udev hot-plug → advertised: a zram disk hot-added through {@code /sys/class/zram-control} until
 * the agent (standalone, its own JVM, the udev plugin) advertises one more healthy device of the
 * Configuration's class to the kubelet emulator in this JVM. Floor: an inotify watch on {@code
 * /dev} in this JVM seeing {@code /dev/zramN} created, timed from the same moment (the earliest any
 * event-driven handler can know). Each disk is removed again (the agent must see it go unhealthy)
 * before the next. Only disks this bench created are removed. Not thread-safe.
 */
final class UdevBench {

  private static final Path CONTROL = Path.of("/sys/class/zram-control");
  private static final String CONFIGURATION = "udevbench";

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  UdevBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  private record Seen(String resource, long nanos, boolean healthy) {}

  /** Measures, or returns why it could not (not root, no zram). */
  Optional<String> run(int disks) throws Exception {
    if (!Files.isReadable(CONTROL.resolve("hot_add"))
        || !Files.isWritable(CONTROL.resolve("hot_remove"))
        || !"root".equals(System.getProperty("user.name"))) {
      return Optional.of("needs root and /sys/class/zram-control (CONFIG_ZRAM)");
    }
    Path root = Files.createDirectories(work.resolve("udev"));
    Path plugins = HandlerAgentRun.plugins(options, root, "udev");
    Path config = Files.createDirectories(root.resolve("config"));
    Files.writeString(
        config.resolve("udev.yaml"),
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + CONFIGURATION
            + "\nspec:\n  capacity: 1\n  discoveryHandler:\n    name: udev\n"
            + "    discoveryDetails: |\n      udevRules:\n"
            + "        - SUBSYSTEM==\"block\", KERNEL==\"zram*\"\n");
    List<Seen> seen = new CopyOnWriteArrayList<>();
    EmulatorListener listener =
        new EmulatorListener() {
          @Override
          public void snapshot(String resource, Map<String, String> devices) {
            if (!devices.isEmpty()) {
              seen.add(new Seen(resource, System.nanoTime(), devices.containsValue("Healthy")));
            }
          }
        };
    Map<String, Long> created = new ConcurrentHashMap<>();
    List<Integer> ours = new ArrayList<>();
    try (WatchService watch = FileSystems.getDefault().newWatchService();
        HandlerAgentRun agent =
            HandlerAgentRun.start(
                options, agentJvm, root, config, plugins, listener, "--offline-grace", "2s")) {
      Path dev = Path.of("/dev");
      dev.register(watch, StandardWatchEventKinds.ENTRY_CREATE);
      Thread watcher =
          new Thread(
              () -> {
                try {
                  while (true) {
                    WatchKey key = watch.take();
                    long now = System.nanoTime();
                    for (WatchEvent<?> e : key.pollEvents()) {
                      if (e.context() instanceof Path p) {
                        created.putIfAbsent(p.toString(), now);
                      }
                    }
                    key.reset();
                  }
                } catch (InterruptedException | java.nio.file.ClosedWatchServiceException e) {
                  // done
                }
              },
              "bench-dev-watch");
      watcher.setDaemon(true);
      watcher.start();
      try {
        // Disk 0 is the warm-up (agent start included), not timed.
        List<Double> handler = new ArrayList<>();
        List<Double> floor = new ArrayList<>();
        List<Double> hotAdd = new ArrayList<>();
        for (int k = 0; k <= disks; k++) {
          long t0 = System.nanoTime();
          int index = Integer.parseInt(Files.readString(CONTROL.resolve("hot_add")).strip());
          long t1 = System.nanoTime();
          ours.add(index);
          String name = "zram" + index;
          String resource =
              "akri.sh/"
                  + InstanceNames.instanceName(
                      CONFIGURATION, "/devices/virtual/block/" + name, false, "bench-node");
          agent.await(
              () -> created.containsKey(name) && first(seen, resource, t0, true).isPresent(),
              name + " advertised");
          if (k > 0) {
            handler.add((first(seen, resource, t0, true).orElseThrow() - t0) / 1e6);
            floor.add((created.get(name) - t0) / 1e6);
            hotAdd.add((t1 - t0) / 1e6);
          }
          long t2 = System.nanoTime();
          Files.writeString(CONTROL.resolve("hot_remove"), Integer.toString(index));
          ours.remove(Integer.valueOf(index));
          created.remove(name);
          agent.await(() -> first(seen, resource, t2, false).isPresent(), name + " unhealthy");
        }
        System.out.printf(
            "  udev: agent %s ms, inotify floor %s ms, hot_add %s ms%n", handler, floor, hotAdd);
        add.accept("udev_hotplug_to_advertised_ms", Stats.median(handler));
        add.accept("udev_hotplug_to_advertised_p99_ms", Stats.percentile(handler, 99));
        add.accept("udev_hotplug_node_visible_ms", Stats.median(floor));
        add.accept("udev_hotplug_node_visible_p99_ms", Stats.percentile(floor, 99));
      } finally {
        for (int index : ours) {
          try {
            Files.writeString(CONTROL.resolve("hot_remove"), Integer.toString(index));
          } catch (IOException e) {
            System.out.println("  udev: could not remove zram" + index + ": " + e.getMessage());
          }
        }
        watcher.interrupt();
      }
    }
    return Optional.empty();
  }

  private static Optional<Long> first(
      List<Seen> seen, String resource, long after, boolean healthy) {
    return seen.stream()
        .filter(s -> s.resource().equals(resource) && s.nanos() >= after && s.healthy() == healthy)
        .map(Seen::nanos)
        .findFirst();
  }
}
