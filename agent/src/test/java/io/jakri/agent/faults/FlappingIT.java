package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.PluginJars;
import io.jakri.agent.TestAgent;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.Pod;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A device that appears and vanishes every 100 ms keeps its Instance (no broker churn), causes no
 * re-registration and at most one kubelet update per change; its health converges once it settles,
 * and it leaves exactly once, after the offline grace, when it settles absent.
 */
class FlappingIT {

  private static final Duration GRACE = Duration.ofSeconds(3);

  @TempDir Path tmp;

  @Test
  void aFlappingDeviceKeepsItsInstanceAndConvergesWithoutAKubeletStorm() throws Exception {
    Path plugins = java.nio.file.Files.createDirectories(tmp.resolve("plugins"));
    PluginJars.plugin(
        plugins.resolve("flap.jar"),
        "flap",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Flapping.class));
    String present = "akri.sh/" + InstanceNames.instanceName("flap-p", "flap", true, "node-a");
    String absent = "akri.sh/" + InstanceNames.instanceName("flap-a", "flap", true, "node-a");
    int flaps = 50;
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, GRACE)) {
      Counting counting = new Counting();
      a.kubelet().addListener(counting);
      a.writeConfig(
          "flap-p",
          TestAgent.configuration("flap-p", "flapping", 1, "ticks: " + flaps + "\nend: present"));
      a.writeConfig(
          "flap-a",
          TestAgent.configuration("flap-a", "flapping", 1, "ticks: " + flaps + "\nend: absent"));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> a.allocatable(present) >= 0 && a.allocatable(absent) >= 0);
      // Counted from when every resource of the first snapshots is registered: per Configuration
      // the flapping device's, the steady one's and the class resource. Read earlier, the count
      // took in the first registrations of those still in flight (seen: 2).
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  a.agent.devicePlugins().served().size() == 6
                      && a.agent.devicePlugins().allRegistered());
      long registrationsAtStart = a.kubelet().registrations();
      AtomicLong instanceGaps = new AtomicLong();
      // While it flaps (5 s) the Instance of each flapping device exists all the time.
      // Sampled every 50 ms for the whole flapping time; a gap is counted, not waited out.
      Duration flapping = Duration.ofMillis(flaps * 100L);
      await()
          .pollDelay(Duration.ZERO)
          .pollInterval(Duration.ofMillis(50))
          .during(flapping)
          .atMost(flapping.plusSeconds(2))
          .until(
              () -> {
                if (a.agent.instances().get(present.substring(8)).isEmpty()) {
                  instanceGaps.incrementAndGet();
                }
                return true;
              });
      // Health converges: the device that settled present is allocatable and usable.
      a.awaitAllocatable(present, 1, Duration.ofSeconds(5));
      var env =
          a.kubelet()
              .admit(Pod.of("default", "p", Container.of("c", present, 1)))
              .container("c")
              .envs();
      assertThat(env).containsKey("K");
      // The one that settled absent is unhealthy during the grace, then gone, once.
      await()
          .atMost(GRACE.plusSeconds(10))
          .until(() -> a.agent.instances().get(absent.substring(8)).isEmpty());
      long registrations = a.kubelet().registrations() - registrationsAtStart;
      long updatesPresent = counting.snapshots.getOrDefault(present, new AtomicLong()).get();
      long updatesAbsent = counting.snapshots.getOrDefault(absent, new AtomicLong()).get();
      System.out.printf(
          "FLAPPING %d flaps per device: %d instance gaps, %d registrations, ListAndWatch updates"
              + " %d (settled present) and %d (settled absent)%n",
          flaps, instanceGaps.get(), registrations, updatesPresent, updatesAbsent);
      assertThat(instanceGaps.get()).as("Instance deleted while flapping (broker churn)").isZero();
      assertThat(registrations).as("re-registrations caused by flapping").isZero();
      // At most one update per change of health (plus the first snapshot and the final one).
      assertThat(updatesPresent).isLessThanOrEqualTo(flaps + 3);
      assertThat(updatesAbsent).isLessThanOrEqualTo(flaps + 3);
      assertThat(a.allocatable(present)).isEqualTo(1);
      assertThat(a.kubelet().capacity().getOrDefault(present, 0L)).isEqualTo(1);
      System.out.println("FAULT device-flapping cases=2 recovered=2 lost=0");
    }
  }

  /** Counts ListAndWatch messages per resource. */
  private static final class Counting implements EmulatorListener {
    final Map<String, AtomicLong> snapshots = new ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      snapshots.computeIfAbsent(resource, r -> new AtomicLong()).incrementAndGet();
    }
  }
}
