package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.LogCapture;
import io.jakri.agent.PluginJars;
import io.jakri.agent.Safeguards;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.DiscoveryManager.ConfigurationStatus;
import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.discovery.HandlerLimits;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.crd.InstanceNames;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Plugins cannot stall the agent: a handler whose start() never returns does not hold up other
 * Configurations, and a handler that blocks the scheduler it is given stops neither config-file
 * reloads nor plugin hot loading.
 */
class HandlerStallIT {

  private static final String SIM = "example.com/sim";

  @TempDir Path tmp;

  /** Directories whose {@code release} file lets the test handlers' blocked threads return. */
  private final List<Path> toRelease = new java.util.ArrayList<>();

  @AfterEach
  void release() throws IOException {
    for (Path dir : toRelease) {
      Files.writeString(dir.resolve("release"), "");
    }
  }

  private Path handlerDir(String name) throws IOException {
    Path dir = Files.createDirectories(tmp.resolve(name));
    toRelease.add(dir);
    return dir;
  }

  private Path plugins() throws IOException {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    PluginJars.plugin(
        plugins.resolve("stall.jar"),
        "stall",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Stuck.class, MisbehavingHandlers.SchedulerHog.class));
    return plugins;
  }

  private static long lines(Path file) throws IOException {
    return Files.exists(file) ? Files.readAllLines(file).size() : 0;
  }

  @Test
  void startThatNeverReturnsDoesNotHoldUpOtherConfigurations() throws Exception {
    Path stuck = handlerDir("stuck");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins(), Duration.ofSeconds(60))) {
      a.writeConfig("stuck", TestAgent.configuration("stuck", "stuck", 1, "dir: " + stuck));
      await().atMost(Duration.ofSeconds(20)).until(() -> lines(stuck.resolve("starts")) == 1);

      // While the first start() hangs, another Configuration is discovered and advertised.
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));
      assertThat(lines(stuck.resolve("starts"))).isEqualTo(1);
      ConfigurationStatus hanging = a.agent.discovery().statuses().get("stuck");
      assertThat(hanging == null ? "" : hanging.message())
          .as("sim was advertised only after the stuck start timed out")
          .doesNotContain("did not start");

      // The stuck start is abandoned and retried; during the retry too, others go ahead.
      await()
          .atMost(Duration.ofSeconds(40))
          .untilAsserted(
              () -> {
                assertThat(lines(stuck.resolve("starts"))).isEqualTo(2);
                assertThat(a.agent.discovery().statuses().get("stuck").state())
                    .isEqualTo(State.FAILED);
              });
      String during = a.agent.discovery().statuses().get("stuck").message();
      a.writeConfig(
          "sim2",
          TestAgent.configuration("sim2", "simulated", 1, "count: 1\nresourceName: " + SIM + "2"));
      a.awaitAllocatable(SIM + "2", 1, Duration.ofSeconds(20));
      assertThat(lines(stuck.resolve("starts"))).isEqualTo(2);
      assertThat(a.agent.discovery().statuses().get("stuck").message())
          .as("sim2 was advertised only after the second stuck start timed out")
          .isEqualTo(during);
      release(); // before the agent closes, which would otherwise wait out its stop timeout
    }
  }

  @Test
  void strandedThreadsAreBoundedCountedLoggedAndFreed() throws Exception {
    Path stuck = handlerDir("stuck");
    Path hog = handlerDir("hog");
    Safeguards safeguards =
        Safeguards.defaults().withHandlerLimits(new HandlerLimits(Duration.ofMillis(500), 2));
    try (LogCapture log = LogCapture.root();
        FaultAgent a =
            FaultAgent.start(
                tmp.resolve("agent"),
                plugins(),
                Duration.ofSeconds(60),
                Optional.empty(),
                safeguards)) {
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.writeConfig("stuck", TestAgent.configuration("stuck", "stuck", 1, "dir: " + stuck));
      a.writeConfig("hog", TestAgent.configuration("hog", "scheduler-hog", 1, "dir: " + hog));

      // Two starts are abandoned, the third is refused: no third thread.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                ConfigurationStatus s = a.agent.discovery().statuses().get("stuck");
                assertThat(s).isNotNull();
                assertThat(s.state()).isEqualTo(State.FAILED);
                assertThat(s.message()).contains("handler stuck has 2 stranded threads");
              });
      // The hog's scheduler got a new thread once, then no more: two of its tasks are stranded.
      await().atMost(Duration.ofSeconds(30)).until(() -> stranded(a, "scheduler-hog") == 2);
      // Retries go on and are refused at once: still two starts, two threads each.
      await()
          .pollDelay(Duration.ZERO)
          .during(Duration.ofSeconds(3))
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  lines(stuck.resolve("starts")) == 2
                      && threadsIn(MisbehavingHandlers.Stuck.class) == 2
                      && stranded(a, "stuck") == 2
                      && threadsIn(MisbehavingHandlers.SchedulerHog.class) == 2
                      && stranded(a, "scheduler-hog") == 2);
      assertThat(
              log.messages().stream()
                  .filter(
                      m ->
                          m.contains("handler stuck blocks: its start for configuration stuck")
                              && m.contains("abandoned"))
                  .count())
          .isEqualTo(2);
      assertThat(log.messages())
          .anyMatch(m -> m.contains("handler scheduler-hog blocks its scheduler"));
      // Everything else is served meanwhile.
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));

      // Released, the stranded threads return and the refused handler starts at once.
      Files.writeString(stuck.resolve("release"), "");
      Files.writeString(hog.resolve("release"), "");
      String device = "akri.sh/" + InstanceNames.instanceName("stuck", "stuck-0", true, "node-a");
      a.awaitAllocatable(device, 1, Duration.ofSeconds(20));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  stranded(a, "stuck") == 0
                      && stranded(a, "scheduler-hog") == 0
                      && threadsIn(MisbehavingHandlers.Stuck.class) == 0
                      && threadsIn(MisbehavingHandlers.SchedulerHog.class) == 0);
    }
  }

  /** The agent's {@code jakri_handler_stranded_threads} for {@code handler}; -1 when absent. */
  private static double stranded(FaultAgent a, String handler) {
    String series = "jakri_handler_stranded_threads{handler=\"" + handler + "\"}";
    return a.agent
        .metrics()
        .scrape()
        .lines()
        .filter(l -> l.startsWith(series + " "))
        .mapToDouble(l -> Double.parseDouble(l.substring(series.length() + 1)))
        .findFirst()
        .orElse(-1);
  }

  /** Live threads running code of {@code type} (a test handler loaded from a plugin jar). */
  private static long threadsIn(Class<?> type) {
    return Thread.getAllStackTraces().values().stream()
        .filter(
            stack -> Arrays.stream(stack).anyMatch(f -> f.getClassName().equals(type.getName())))
        .count();
  }

  @Test
  void handlerBlockingItsSchedulerStopsNeitherConfigReloadsNorPluginLoading() throws Exception {
    Path hog = handlerDir("hog");
    Path plugins = plugins();
    try (LogCapture log = LogCapture.root();
        FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig("hog", TestAgent.configuration("hog", "scheduler-hog", 1, "dir: " + hog));
      await().atMost(Duration.ofSeconds(20)).until(() -> lines(hog.resolve("starts")) == 1);

      // A config file written now is still read...
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));

      // ...and a plugin dropped in now is still loaded.
      Path staging = tmp.resolve("late.jar");
      PluginJars.plugin(staging, "late", ">=0.1.0", List.of(MisbehavingHandlers.Late.class));
      Files.move(staging, plugins.resolve("late.jar"), StandardCopyOption.ATOMIC_MOVE);
      a.writeConfig("late", TestAgent.configuration("late", "late", 1, ""));
      String late = "akri.sh/" + InstanceNames.instanceName("late", "late-0", true, "node-a");
      a.awaitAllocatable(late, 1, Duration.ofSeconds(20));

      // The blocking handler is named in the log.
      await()
          .atMost(Duration.ofSeconds(40))
          .until(
              () ->
                  log.messages().stream()
                      .anyMatch(m -> m.contains("handler scheduler-hog blocks its scheduler")));
      await().atMost(Duration.ofSeconds(20)).until(() -> stranded(a, "scheduler-hog") >= 1);
      release();
    }
  }

  @Test
  void pluginWhoseCodeBlocksWhileLoadingIsRefusedAndLoadingGoesOn() throws Exception {
    Path plugins = plugins();
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      Path staging = tmp.resolve("name-hanger.jar");
      PluginJars.plugin(
          staging, "name-hanger", ">=0.1.0", List.of(MisbehavingHandlers.NameHanging.class));
      Files.move(staging, plugins.resolve("name-hanger.jar"), StandardCopyOption.ATOMIC_MOVE);
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> threadsIn(MisbehavingHandlers.NameHanging.class) == 1);

      // Config files are still read while the plugin's name() hangs...
      a.writeConfig(
          "sim", TestAgent.configuration("sim", "simulated", 1, "count: 2\nresourceName: " + SIM));
      a.awaitAllocatable(SIM, 2, Duration.ofSeconds(20));

      // ...the jar is refused after the timeout, and a jar dropped in later still loads.
      staging = tmp.resolve("late.jar");
      PluginJars.plugin(staging, "late", ">=0.1.0", List.of(MisbehavingHandlers.Late.class));
      Files.move(staging, plugins.resolve("late.jar"), StandardCopyOption.ATOMIC_MOVE);
      a.writeConfig("late", TestAgent.configuration("late", "late", 1, ""));
      String late = "akri.sh/" + InstanceNames.instanceName("late", "late-0", true, "node-a");
      a.awaitAllocatable(late, 1, Duration.ofSeconds(40));
      assertThat(a.agent.pluginProblems())
          .anyMatch(
              p ->
                  p.jar().getFileName().toString().equals("name-hanger.jar")
                      && p.reason().contains("did not create its handlers within 10s"));
      // Reported once: the rescan that loaded late.jar did not run the hanging code again (it
      // once did, stalling that rescan for another 10 s and reporting the jar a second time).
      assertThat(a.agent.pluginProblems())
          .filteredOn(p -> p.jar().getFileName().toString().equals("name-hanger.jar"))
          .hasSize(1);
    }
  }
}
