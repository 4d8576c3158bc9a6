package io.jakri.bench;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;

/**
 * First scale figure: how long one in-process agent takes until N simulated Instances are
 * registered with the kubelet emulator (and have reported their devices), and the process's RSS,
 * heap and thread count then. Usage: {@code ScaleBench <pluginsDir> [N...]}. Prints one {@code
 * BENCH name value unit} line per figure.
 */
public final class ScaleBench {

  private ScaleBench() {}

  public static void main(String[] args) throws Exception {
    Path plugins = Path.of(args.length > 0 ? args[0] : "agent/target/plugins").toAbsolutePath();
    int[] sizes = {1000};
    if (args.length > 1) {
      sizes = new int[args.length - 1];
      for (int i = 1; i < args.length; i++) {
        sizes[i - 1] = Integer.parseInt(args[i]);
      }
    }
    for (int n : sizes) {
      run(plugins, n);
    }
  }

  private static void run(Path plugins, int n) throws Exception {
    Path root = Files.createTempDirectory("jakri-bench-");
    Path config = Files.createDirectories(root.resolve("config"));
    Files.writeString(
        config.resolve("sim.yaml"),
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: sim\nspec:\n"
            + "  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n      count: "
            + n
            + "\n");
    AgentOptions options =
        new AgentOptions(
            "bench-node",
            true,
            Optional.of(config),
            true,
            root.resolve("device-plugins"),
            root.resolve("pod-resources").resolve("kubelet.sock"),
            plugins,
            Duration.ofSeconds(60));
    long start = System.nanoTime();
    try (Agent agent = Agent.start(options)) {
      KubeletEmulator kubelet = agent.emulator().orElseThrow();
      java.util.concurrent.Semaphore changed = new java.util.concurrent.Semaphore(0);
      kubelet.addListener(
          new io.jakri.kubelet.emulator.EmulatorListener() {
            @Override
            public void registered(String resource, String endpoint) {
              changed.release();
            }

            @Override
            public void snapshot(String resource, java.util.Map<String, String> devices) {
              changed.release();
            }
          });
      long deadline = start + Duration.ofMinutes(5).toNanos();
      // Checked whenever the emulator reports a change (no polling loop competing for the CPU).
      while (kubelet.registeredResources().size() < n + 1
          || kubelet.allocatable().getOrDefault("akri.sh/sim", 0L) < n) {
        if (System.nanoTime() > deadline) {
          throw new IllegalStateException(
              "only " + kubelet.registeredResources().size() + " resources registered");
        }
        changed.tryAcquire(100, java.util.concurrent.TimeUnit.MILLISECONDS);
        changed.drainPermits();
      }
      long millis = (System.nanoTime() - start) / 1_000_000;
      System.gc();
      MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
      long heap = memory.getHeapMemoryUsage().getUsed();
      System.out.printf("BENCH instances_registered_%d_ms %d ms%n", n, millis);
      System.out.printf("BENCH rss_at_%d_instances_mb %d MB%n", n, rssKb() / 1024);
      System.out.printf("BENCH heap_used_at_%d_instances_mb %d MB%n", n, heap / (1024 * 1024));
      System.out.printf(
          "BENCH threads_at_%d_instances %d threads%n",
          n, ManagementFactory.getThreadMXBean().getThreadCount());
    }
  }

  private static long rssKb() throws Exception {
    for (String line : Files.readAllLines(Path.of("/proc/self/status"))) {
      if (line.startsWith("VmRSS:")) {
        return Long.parseLong(line.replaceAll("[^0-9]", ""));
      }
    }
    return -1;
  }
}
