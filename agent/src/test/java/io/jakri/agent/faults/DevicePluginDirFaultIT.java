package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.TestAgent;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.events.AgentReport;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device-plugin directory turns read-only, then full (no inodes left), while the agent runs: a
 * resource that needs a new socket meanwhile fails with a clear reason and is retried, the
 * resources already served keep allocating, and everything is served once the directory is fixed.
 * Needs {@code mount} (root with CAP_SYS_ADMIN) for a small tmpfs; skipped otherwise.
 */
class DevicePluginDirFaultIT {

  private static final String SIM = "example.com/sim";

  @TempDir Path tmp;

  @Test
  void readOnlyAndFullDevicePluginDirAreReportedRetriedAndRecovered() throws Exception {
    Path dp = Files.createDirectories(tmp.resolve("agent").resolve("device-plugins"));
    boolean mounted =
        run("mount", "-t", "tmpfs", "-o", "size=4m,nr_inodes=64", "tmpfs", dp.toString());
    // CI runs as root and must run this test; elsewhere it may be skipped.
    if ("true".equals(System.getenv("CI"))) {
      org.assertj.core.api.Assertions.assertThat(mounted)
          .as("CI=true: mounting a tmpfs for the device-plugin dir must work (root, CAP_SYS_ADMIN)")
          .isTrue();
    }
    Assumptions.assumeTrue(mounted, "cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)");
    try {
      Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
      Map<String, String> failures = new ConcurrentHashMap<>();
      try (FaultAgent a =
          FaultAgent.start(
              tmp.resolve("agent"),
              plugins,
              Duration.ofSeconds(60),
              event -> {
                if (event instanceof AgentReport.DevicePlugin p
                    && p.report() instanceof DevicePluginReport.RegistrationFailed f) {
                  failures.put(f.resource(), f.reason());
                }
              })) {
        a.writeConfig(
            "sim",
            TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
        a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));

        // Read-only: a new resource cannot get its socket; the reason says why.
        assertThat(run("mount", "-o", "remount,ro", dp.toString())).isTrue();
        a.writeConfig(
            "ro",
            TestAgent.configuration(
                "ro", "simulated", 1, "count: 1\nresourceName: example.com/ro"));
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> assertThat(failures.get("example.com/ro")).contains("Read-only file system"));
        allocateAndFree(a, "during-ro");
        assertThat(run("mount", "-o", "remount,rw", dp.toString())).isTrue();
        long roRecovery = timeUntilAllocatable(a, "example.com/ro", 1);

        // Full: no inode left for a socket.
        List<Path> fillers = new ArrayList<>();
        try {
          for (int i = 0; i < 200; i++) {
            fillers.add(Files.createFile(dp.resolve("filler-" + i)));
          }
        } catch (IOException expected) {
          // No space left on device: the directory is full.
        }
        assertThat(fillers).hasSizeLessThan(200);
        a.writeConfig(
            "full",
            TestAgent.configuration(
                "full", "simulated", 1, "count: 1\nresourceName: example.com/full"));
        await()
            .atMost(Duration.ofSeconds(20))
            .untilAsserted(
                () -> assertThat(failures.get("example.com/full")).contains("No space left"));
        allocateAndFree(a, "during-full");
        for (Path filler : fillers) {
          Files.delete(filler);
        }
        long fullRecovery = timeUntilAllocatable(a, "example.com/full", 1);
        assertThat(a.allocatable(SIM)).isEqualTo(2);
        System.out.printf(
            "DP-DIR read-only recovered %d ms after remount rw (%s); full recovered %d ms after"
                + " freeing (%s)%n",
            roRecovery,
            failures.get("example.com/ro"),
            fullRecovery,
            failures.get("example.com/full"));
        System.out.println("FAULT device-plugin-dir cases=2 recovered=2 lost=0");
      }
    } finally {
      run("umount", "-l", dp.toString());
    }
  }

  private static void allocateAndFree(FaultAgent a, String pod) throws Exception {
    var admission = a.kubelet().admit(Pod.of("default", pod, Container.of("c", SIM, 1)));
    assertThat(admission.container("c").envs()).containsKey("EXAMPLECOM_SIM_NUM_DEVICES");
    a.kubelet().removePod("default", pod);
  }

  private static long timeUntilAllocatable(FaultAgent a, String resource, long count) {
    long start = System.nanoTime();
    a.awaitAllocatable(resource, count, Duration.ofSeconds(60));
    return (System.nanoTime() - start) / 1_000_000;
  }

  private static boolean run(String... command) throws Exception {
    try {
      Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
      String out = new String(p.getInputStream().readAllBytes());
      boolean ok = p.waitFor(20, TimeUnit.SECONDS) && p.exitValue() == 0;
      if (!ok) {
        System.out.println(String.join(" ", command) + ": " + out);
      }
      return ok;
    } catch (IOException e) {
      return false;
    }
  }
}
