package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.TestAgent;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.AdmissionException;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The kubelet restarts {@code jakri.kubelet.restarts} times (default 100) in a row while pods are
 * being admitted and removed: after each restart every resource is registered and allocatable
 * again; no device is ever given to two live pods; afterwards no socket, thread or fd has leaked
 * and every slot is free again once the pods are gone.
 */
class KubeletRestartIT {

  private static final int RESTARTS = Integer.getInteger("jakri.kubelet.restarts", 100);
  private static final String SIM = "example.com/sim";

  @TempDir Path tmp;

  @Test
  void everyResourceComesBackAfterEachOfManyKubeletRestartsUnderLoad() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a =
        FaultAgent.start(
            tmp.resolve("agent"),
            plugins,
            Duration.ofSeconds(60),
            Optional.of(Duration.ofSeconds(1)))) {
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 4\nresourceName: " + SIM));
      a.writeConfig(
          "echo", TestAgent.configuration("echo", "simulated", 2, "count: 2\nshared: true"));
      String echo0 =
          "akri.sh/" + InstanceNames.instanceName("echo", "simple-device-node-a-0", true, "node-a");
      Map<String, Long> expected = Map.of(SIM, 4L, "akri.sh/echo", 4L, echo0, 2L);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  expected.entrySet().stream()
                      .allMatch(e -> a.allocatable(e.getKey()) == e.getValue()));
      int resources = a.kubelet().registeredResources().size();

      // Warm up once so lazily created threads and fds are there before the baseline.
      a.kubelet().restart();
      awaitBack(a, expected);
      long fdsBefore = FaultAgent.openFds();
      int threadsBefore = FaultAgent.threads();
      long socketsBefore = a.socketFiles();

      // Load: pods come and go all the time on the class resource, checked for double use.
      AtomicBoolean stop = new AtomicBoolean();
      AtomicLong admitted = new AtomicLong();
      AtomicLong refused = new AtomicLong();
      List<String> doubleUse = new ArrayList<>();
      Map<String, String> liveDevices = new ConcurrentHashMap<>();
      Thread load =
          new Thread(
              () -> {
                long n = 0;
                while (!stop.get()) {
                  String pod = "load-" + n++;
                  try {
                    PodAdmission p =
                        a.kubelet().admit(Pod.of("default", pod, Container.of("c", SIM, 2)));
                    admitted.incrementAndGet();
                    for (String id : p.container("c").deviceIds(SIM)) {
                      String other = liveDevices.putIfAbsent(id, pod);
                      if (other != null) {
                        synchronized (doubleUse) {
                          doubleUse.add(id + " given to " + pod + " while " + other + " holds it");
                        }
                      }
                    }
                    a.kubelet().removePod("default", pod);
                    liveDevices.values().removeIf(pod::equals);
                  } catch (AdmissionException | RuntimeException e) {
                    refused.incrementAndGet(); // e.g. admitted while the resource re-registers
                    // Pace the retries (load generation, not synchronisation).
                    java.util.concurrent.locks.LockSupport.parkNanos(2_000_000);
                  }
                }
              },
              "restart-load");
      load.start();

      int recovered = 0;
      long worstMs = 0;
      for (int i = 0; i < RESTARTS; i++) {
        long start = System.nanoTime();
        a.kubelet().restart();
        awaitBack(a, expected);
        worstMs = Math.max(worstMs, (System.nanoTime() - start) / 1_000_000);
        recovered++;
      }
      stop.set(true);
      load.join(30_000);

      assertThat(doubleUse).isEmpty();
      assertThat(a.kubelet().registeredResources()).hasSize(resources);
      // Pods are gone: after the reclaim grace no slot stays held.
      await().atMost(Duration.ofSeconds(30)).until(() -> a.slotsHeld("sim") == 0);
      PodAdmission all = a.kubelet().admit(Pod.of("default", "all", Container.of("c", SIM, 4)));
      assertThat(new HashSet<>(all.container("c").deviceIds(SIM))).hasSize(4);

      long fdsAfter = FaultAgent.openFds();
      int threadsAfter = FaultAgent.threads();
      long socketsAfter = a.socketFiles();
      System.out.printf(
          "KUBELET-RESTART %d restarts, worst recovery %d ms; under load %d pods admitted, %d"
              + " refused during restarts; fds %d -> %d, threads %d -> %d, socket files %d -> %d%n",
          RESTARTS,
          worstMs,
          admitted.get(),
          refused.get(),
          fdsBefore,
          fdsAfter,
          threadsBefore,
          threadsAfter,
          socketsBefore,
          socketsAfter);
      assertThat(socketsAfter).isEqualTo(socketsBefore);
      assertThat(fdsAfter).isLessThan(fdsBefore + 30);
      assertThat(threadsAfter).isLessThan(threadsBefore + 10);
      assertThat(admitted.get()).isPositive();
      System.out.printf(
          "FAULT kubelet-restart cases=%d recovered=%d lost=%d%n",
          RESTARTS, recovered, doubleUse.size());
    }
  }

  private static void awaitBack(FaultAgent a, Map<String, Long> expected) {
    await()
        .atMost(Duration.ofSeconds(10))
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                expected.entrySet().stream()
                    .allMatch(e -> a.allocatable(e.getKey()) == e.getValue()));
  }
}
