package io.jakri.bench;

import io.jakri.kubelet.emulator.EmulatorListener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;

/**
 * A small Configuration beside a big one, with a slow kubelet (issue 26.3): the kubelet emulator in
 * this JVM answers every Register {@link #REGISTER} after it arrived (all side by side); the agent
 * runs standalone in its own JVM with the simulated handler. On the idle agent (after a warm-up
 * Configuration) a one-device Configuration is written and timed from the file's move into the
 * Configuration directory until the emulator has a ListAndWatch snapshot with the device healthy
 * for both its resources (the Instance's and the class); that is the floor. Then a Configuration of
 * N devices is written, and as soon as the kubelet has registered its first resource a second
 * one-device Configuration, timed the same way; the big one is timed until all its resources are
 * advertised. Not thread-safe.
 */
final class SlowKubeletBench {

  static final Duration REGISTER = Duration.ofMillis(100);
  private static final Duration READY_TIMEOUT = Duration.ofMinutes(6);

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  SlowKubeletBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Per resource, when it was first seen advertised (a snapshot with a healthy device). */
  private static final class Advertised implements EmulatorListener {
    final Map<String, Long> at = new ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      if (devices.containsValue("Healthy")) {
        at.putIfAbsent(resource, System.nanoTime());
      }
    }

    /** When every resource of Configuration {@code name} (Instance and class) was advertised. */
    long configuration(String name, int resources) {
      List<Long> times =
          at.entrySet().stream()
              .filter(
                  e ->
                      e.getKey().equals("akri.sh/" + name)
                          || e.getKey().startsWith("akri.sh/" + name + "-"))
              .map(Map.Entry::getValue)
              .toList();
      return times.size() < resources
          ? -1
          : times.stream().mapToLong(Long::longValue).max().orElse(-1);
    }
  }

  void run(int n, int run) throws Exception {
    Path root = Files.createDirectories(work.resolve("slow-kubelet-" + n + "-" + run));
    Path config = Files.createDirectories(root.resolve("config"));
    Advertised advertised = new Advertised();
    try (HandlerAgentRun agent =
        HandlerAgentRun.start(
            options,
            agentJvm,
            root,
            config,
            options.plugins(),
            advertised,
            b -> b.registerDelay(REGISTER))) {
      write(config, "warm", 1);
      agent.await(() -> advertised.configuration("warm", 2) > 0, "warm-up Configuration");

      long t0 = write(config, "alone", 1);
      agent.await(() -> advertised.configuration("alone", 2) > 0, "the small Configuration alone");
      add.accept(
          "slow_kubelet_small_alone_advertise_ms", ms(advertised.configuration("alone", 2) - t0));

      int distinct = Bench.distinctInstances("big", n);
      Readiness big = new Readiness(distinct + 1, r -> r.equals("akri.sh/big") ? distinct : 1);
      agent.emulator().addListener(big);
      long bigAt = write(config, "big", n);
      agent.await(() -> big.firstRegisteredAt() != 0, "the big Configuration's first Register");
      long smallAt = write(config, "beside", 1);
      agent.await(
          () -> advertised.configuration("beside", 2) > 0, "the small Configuration beside");
      long smallDone = advertised.configuration("beside", 2);
      add.accept("slow_kubelet_small_beside_big_advertise_ms", ms(smallDone - smallAt));
      long bigDone = big.await(READY_TIMEOUT);
      add.accept("slow_kubelet_big_" + n + "_advertise_ms", ms(bigDone - bigAt));
      add.accept(
          "slow_kubelet_big_advertised_when_small_advertised_pct",
          100.0
              * advertised.at.entrySet().stream()
                  .filter(e -> e.getKey().startsWith("akri.sh/big-") && e.getValue() <= smallDone)
                  .count()
              / distinct);
    }
  }

  /** Moves a Configuration of {@code count} simulated devices into place; returns nanoTime then. */
  private static long write(Path dir, String name, int count) throws IOException {
    Path tmp = dir.resolve("." + name + ".yaml.tmp");
    Files.writeString(
        tmp,
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + name
            + "\nspec:\n  discoveryHandler:\n    name: simulated\n    discoveryDetails: |\n"
            + "      count: "
            + count
            + "\n");
    long at = System.nanoTime();
    Files.move(tmp, dir.resolve(name + ".yaml"), StandardCopyOption.ATOMIC_MOVE);
    return at;
  }

  private static double ms(long nanos) {
    return nanos / 1e6;
  }
}
