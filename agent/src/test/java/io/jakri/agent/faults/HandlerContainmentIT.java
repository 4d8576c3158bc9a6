package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.PluginJars;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Handlers that throw, hang, flood (10,000 new devices per second) or report a million properties
 * are contained and reported; the agent stays within memory bounds and keeps serving another
 * Configuration throughout.
 */
class HandlerContainmentIT {

  private static final String SIM = "example.com/sim";
  private static final long HEAP_GROWTH_BOUND = 512L * 1024 * 1024;

  @TempDir Path tmp;

  @Test
  void throwingHangingFloodingAndWideHandlersAreContainedWhileOthersKeepServing() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    PluginJars.plugin(
        plugins.resolve("faults.jar"),
        "faults",
        ">=0.1.0",
        List.of(
            MisbehavingHandlers.Flooding.class,
            MisbehavingHandlers.Huge.class,
            MisbehavingHandlers.ValidateThrowing.class,
            MisbehavingHandlers.ValidateHanging.class,
            MisbehavingHandlers.CloseThrowing.class));
    // Not under @TempDir: the emulator may still write its checkpoint just after close (see
    // SECURITY.md), so the directory is removed with retries at the end.
    Path agentRoot = java.nio.file.Files.createTempDirectory("jakri-containment");
    try {
      run(plugins, agentRoot);
    } finally {
      await()
          .atMost(Duration.ofSeconds(30))
          .ignoreExceptions()
          .until(() -> FaultAgent.deleteTree(agentRoot));
    }
  }

  private void run(Path plugins, Path agentRoot) throws Exception {
    long heapBefore = FaultAgent.heapAfterGc();
    int threadsBefore = FaultAgent.threads();
    FaultAgent started = FaultAgent.start(agentRoot, plugins, Duration.ofSeconds(60));
    try (FaultAgent a = started) {
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));
      for (String name : List.of("validate-thrower", "validate-hanger", "close-thrower")) {
        a.writeConfig(name, TestAgent.configuration(name, name, 1, ""));
      }
      a.writeConfig("huge", TestAgent.configuration("huge", "huge", 1, ""));
      a.writeConfig("flood", TestAgent.configuration("flood", "flood", 1, ""));

      // A callback that throws after reporting does not lose the device.
      String ct = "akri.sh/" + InstanceNames.instanceName("close-thrower", "ct-0", true, "node-a");
      a.awaitAllocatable(ct, 1, Duration.ofSeconds(20));

      // A million properties: the device is served with bounded, filtered env.
      String wide = "akri.sh/" + InstanceNames.instanceName("huge", "wide", true, "node-a");
      a.awaitAllocatable(wide, 1, Duration.ofSeconds(60));
      Map<String, String> env =
          a.kubelet()
              .admit(Pod.of("default", "w", Container.of("c", wide, 1)))
              .container("c")
              .envs();
      assertThat(env).doesNotContainKey("LD_PRELOAD").hasSizeLessThanOrEqualTo(2 * 256);
      a.kubelet().removePod("default", "w");

      // Flood for a while; the other Configuration keeps serving and allocating.
      String steady = "akri.sh/" + InstanceNames.instanceName("flood", "steady", true, "node-a");
      java.util.concurrent.atomic.AtomicInteger admittedCount =
          new java.util.concurrent.atomic.AtomicInteger();
      java.util.concurrent.atomic.AtomicLong maxFlood =
          new java.util.concurrent.atomic.AtomicLong();
      // One admission round every 200 ms for 6 s; every round must pass.
      await()
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(200))
          .during(Duration.ofSeconds(6))
          .atMost(Duration.ofSeconds(8))
          .until(
              () -> {
                int n = admittedCount.get();
                assertThat(a.allocatable(SIM)).isEqualTo(2);
                var admission =
                    a.kubelet().admit(Pod.of("default", "p" + n, Container.of("c", SIM, 1)));
                assertThat(admission.container("c").envs())
                    .containsKey("EXAMPLECOM_SIM_NUM_DEVICES");
                a.kubelet().removePod("default", "p" + n);
                admittedCount.incrementAndGet();
                maxFlood.accumulateAndGet(a.instancesOf("flood"), Math::max);
                return true;
              });
      // Throwing and hanging validate() are reported, not fatal (checked after the flood, which
      // runs while validate-hanger hangs for the 10 s call timeout).
      await()
          .atMost(Duration.ofSeconds(40))
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                Map<String, DiscoveryManager.ConfigurationStatus> s =
                    a.agent.discovery().statuses();
                assertThat(s.get("validate-thrower").state()).isIn(State.FAILED, State.INVALID);
                assertThat(s.get("validate-thrower").message()).contains("validate exploded");
                assertThat(s.get("validate-hanger").state()).isIn(State.FAILED, State.INVALID);
                assertThat(s.get("validate-hanger").message()).isNotBlank();
              });

      int admitted = admittedCount.get();
      long maxTracked = maxFlood.get();
      long floodInstances = a.instancesOf("flood");
      long hugeInstances = a.instancesOf("huge");
      long heapDuring = FaultAgent.heapAfterGc();
      System.out.printf(
          "FLOOD max %d flood instances, %d huge instances, heap growth %d MiB, threads %d -> %d,"
              + " %d pods admitted meanwhile%n",
          maxTracked,
          hugeInstances,
          (heapDuring - heapBefore) >> 20,
          threadsBefore,
          FaultAgent.threads(),
          admitted);
      assertThat(maxTracked).isLessThanOrEqualTo(DiscoveryManager.MAX_DEVICES);
      assertThat(floodInstances).isLessThanOrEqualTo(DiscoveryManager.MAX_DEVICES);
      assertThat(hugeInstances).isLessThanOrEqualTo(DiscoveryManager.MAX_DEVICES);
      if (heapDuring - heapBefore >= HEAP_GROWTH_BOUND) {
        // What the heap holds, for whoever reads the failure.
        Object histogram =
            java.lang.management.ManagementFactory.getPlatformMBeanServer()
                .invoke(
                    new javax.management.ObjectName("com.sun.management:type=DiagnosticCommand"),
                    "gcClassHistogram",
                    new Object[] {new String[0]},
                    new String[] {String[].class.getName()});
        System.out.println(String.join("\n", String.valueOf(histogram).lines().limit(40).toList()));
      }
      assertThat(heapDuring - heapBefore).isLessThan(HEAP_GROWTH_BOUND);
      assertThat(admitted).isGreaterThan(10);
      a.awaitAllocatable(steady, 1, Duration.ofSeconds(20));

      // Removing the floods gives everything back; the thrower's close() failure is contained.
      a.deleteConfig("flood");
      a.deleteConfig("huge");
      a.deleteConfig("close-thrower");
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () ->
                  a.instancesOf("flood") == 0
                      && a.instancesOf("huge") == 0
                      && a.instancesOf("close-thrower") == 0);
      assertThat(a.allocatable(SIM)).isEqualTo(2);
      System.out.printf(
          "FAULT handler-containment cases=6 recovered=6 lost=0 (throw-in-validate,"
              + " hang-in-validate, throw-in-callback-and-close, flood-10000/s, 30000-devices,"
              + " 1000000-properties; %d allocations served during the flood)%n",
          admitted);
    }
    // Closing the agent leaves no socket behind, also a little later (late writers count).
    java.util.List<String> seen = new java.util.ArrayList<>();
    java.util.Set<String> ever = new java.util.TreeSet<>();
    long closedAt = System.nanoTime();
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(50))
        .until(
            () -> {
              java.util.List<String> now;
              try (var files = java.nio.file.Files.list(started.devicePluginDir)) {
                now = files.map(p -> p.getFileName().toString()).sorted().toList();
              }
              now.stream().filter(n -> !n.equals("kubelet_internal_checkpoint")).forEach(ever::add);
              boolean stable = now.equals(seen) && System.nanoTime() - closedAt > 3_000_000_000L;
              seen.clear();
              seen.addAll(now);
              return stable;
            });
    System.out.println(
        "CONTAINMENT device-plugin dir after close: " + seen + ", appeared meanwhile: " + ever);
    assertThat(seen)
        .as("sockets left in the device-plugin dir after close")
        .allMatch(n -> !n.endsWith(".sock") || n.equals("kubelet.sock"));
  }
}
