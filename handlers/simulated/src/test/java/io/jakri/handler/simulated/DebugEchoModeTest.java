package io.jakri.handler.simulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/** Akri's debugEcho behaviour: DEBUG_ECHO_INSTANCES_SHARED and the availability file. */
class DebugEchoModeTest {

  private static final String AKRI_DETAILS = "descriptions:\n  - foo0\n  - foo1\n";

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @TempDir Path dir;

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  private SimulatedHandler handler(Map<String, String> env) {
    return new SimulatedHandler(
        new SimulatedSettings.Defaults(env::get, dir.resolve("debug-echo-availability.txt")));
  }

  private DiscoveryContext context(String details) {
    return new DiscoveryContext("akri-debug-echo-foo", "node-a", details, Map.of(), scheduler);
  }

  private List<DiscoveredDevice> firstSnapshot(SimulatedHandler handler, String details)
      throws Exception {
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery = handler.start(context(details), listener)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots().isEmpty());
    }
    return listener.snapshots().get(0);
  }

  @Test
  void akriDetailsWithoutTheVariableGiveSharedDevicesAsAkrisChartDefault() throws Exception {
    assertThat(firstSnapshot(handler(Map.of()), AKRI_DETAILS))
        .extracting(DiscoveredDevice::shared)
        .containsExactly(true, true);
  }

  @ParameterizedTest
  @CsvSource({"true,true", "false,false", "' false ',false"})
  void theVariableDecidesSharednessWhenTheDetailsDoNotSay(String value, boolean shared)
      throws Exception {
    assertThat(firstSnapshot(handler(Map.of(SimulatedSettings.SHARED_ENV, value)), AKRI_DETAILS))
        .extracting(DiscoveredDevice::shared)
        .containsOnly(shared);
  }

  @Test
  void sharedInTheDetailsWinsOverTheVariable() throws Exception {
    SimulatedHandler handler = handler(Map.of(SimulatedSettings.SHARED_ENV, "true"));
    assertThat(firstSnapshot(handler, AKRI_DETAILS + "shared: false\n"))
        .extracting(DiscoveredDevice::shared)
        .containsOnly(false);
  }

  @Test
  void aVariableThatIsNotABooleanIsAWarningAndTheDevicesAreShared() throws Exception {
    SimulatedHandler handler = handler(Map.of(SimulatedSettings.SHARED_ENV, "yes\nforged"));
    Validation validation = handler.validate(context(AKRI_DETAILS));
    assertThat(validation.errors()).isEmpty();
    assertThat(validation.warnings())
        .singleElement()
        .asString()
        .contains("DEBUG_ECHO_INSTANCES_SHARED")
        .contains("yes?forged")
        .doesNotContain("\n");
    assertThat(firstSnapshot(handler, AKRI_DETAILS))
        .extracting(DiscoveredDevice::shared)
        .containsOnly(true);
  }

  @Test
  void countModeIgnoresTheVariable() throws Exception {
    SimulatedHandler handler = handler(Map.of(SimulatedSettings.SHARED_ENV, "true"));
    assertThat(firstSnapshot(handler, "count: 1"))
        .extracting(DiscoveredDevice::shared)
        .containsOnly(false);
  }

  @Test
  void offlineInTheAvailabilityFileMakesTheDevicesVanishAndReturn() throws Exception {
    Path file = dir.resolve("debug-echo-availability.txt");
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery = handler(Map.of()).start(context(AKRI_DETAILS), listener)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 1);
      assertThat(listener.lastIds()).containsExactly("foo0", "foo1");

      Files.writeString(file, "OFFLINE\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 2);
      assertThat(listener.lastIds()).isEmpty();

      Files.writeString(file, "\n");
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 3);
      assertThat(listener.lastIds()).containsExactly("foo0", "foo1");
    }
    assertThat(listener.failures()).isEmpty();
  }

  @Test
  void aFileThatSaysOfflineAtStartReportsAnEmptySnapshotFirst() throws Exception {
    Path file = dir.resolve("custom-availability");
    Files.writeString(file, "devices are OFFLINE for maintenance");
    List<DiscoveredDevice> first =
        firstSnapshot(
            handler(Map.of()), AKRI_DETAILS + "availabilityFile: " + file.toAbsolutePath() + "\n");
    assertThat(first).isEmpty();
  }

  @Test
  void anEmptyAvailabilityFileTurnsTheCheckOff() throws Exception {
    Files.writeString(dir.resolve("debug-echo-availability.txt"), "OFFLINE");
    assertThat(firstSnapshot(handler(Map.of()), AKRI_DETAILS + "availabilityFile: \"\"\n"))
        .extracting(DiscoveredDevice::id)
        .containsExactly("foo0", "foo1");
  }

  @Test
  void availabilitySettingsAreCheckedAndOnlyMeantForDebugEchoMode() {
    SimulatedHandler handler = handler(Map.of());
    assertThat(
            handler
                .validate(
                    context(
                        AKRI_DETAILS
                            + "availabilityFile: relative/file\navailabilityCheckSeconds: 0\n"))
                .errors())
        .containsExactlyInAnyOrder(
            "availabilityFile must be an absolute path",
            "availabilityCheckSeconds must be between 1 and 3600 but is 0");
    assertThat(handler.validate(context("count: 1\navailabilityFile: /tmp/x\n")).warnings())
        .containsExactly(
            "availabilityFile is only used with descriptions (Akri's debugEcho mode); ignored");
  }
}
