package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.LogCapture;
import io.jakri.agent.Safeguards;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.DiscoveryManager;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * brokerProperties that set reserved env names (LD_PRELOAD, PATH, ...) are refused unless the
 * operator allows them; env entries that never reach a container are logged once, not dropped
 * silently.
 */
class ReservedEnvIT {

  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path tmp;

  private static String withBrokerProperties(String name, String details, String properties) {
    return TestAgent.configuration(name, "simulated", 1, details)
        + "  brokerProperties:\n"
        + properties.lines().map(l -> "    " + l + "\n").reduce("", String::concat);
  }

  @Test
  void reservedBrokerEnvIsRefusedByDefault() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "preload",
          withBrokerProperties(
              "preload", "count: 1", "LD_PRELOAD: /tmp/evil.so\nJAVA_TOOL_OPTIONS: -javaagent:x"));
      a.writeConfig("fine", withBrokerProperties("fine", "count: 1", "GREETING: hello"));
      a.awaitAllocatable("akri.sh/fine", 1, WAIT);
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                DiscoveryManager.ConfigurationStatus status =
                    a.agent.discovery().statuses().get("preload");
                assertThat(status).isNotNull();
                assertThat(status.state()).isEqualTo(DiscoveryManager.State.INVALID);
                assertThat(status.message())
                    .contains("JAVA_TOOL_OPTIONS, LD_PRELOAD")
                    .contains("--allow-reserved-broker-env");
              });
      assertThat(a.instancesOf("preload")).isZero();
      assertThat(a.allocatable("akri.sh/preload")).isEqualTo(-1);
      assertThat(a.agent.metrics().scrape())
          .contains("jakri_refusals_total{reason=\"RESERVED_ENV\"} 1.0");

      // Fixed in place: discovery starts.
      a.writeConfig("preload", withBrokerProperties("preload", "count: 1", "GREETING: hi"));
      a.awaitAllocatable("akri.sh/preload", 1, WAIT);
    }
  }

  @Test
  void theOperatorMayAllowReservedBrokerEnv() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a =
        FaultAgent.start(
            tmp.resolve("agent"),
            plugins,
            Duration.ofSeconds(60),
            Optional.empty(),
            Safeguards.defaults().withAllowReservedBrokerEnv(true))) {
      a.writeConfig(
          "preload", withBrokerProperties("preload", "count: 1", "LD_PRELOAD: /opt/lib.so"));
      a.awaitAllocatable("akri.sh/preload", 1, WAIT);
      assertThat(a.agent.discovery().statuses().get("preload").state())
          .isEqualTo(DiscoveryManager.State.DISCOVERING);
    }
  }

  @Test
  void droppedEnvEntriesAreLoggedOnce() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class);
        FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "drops",
          withBrokerProperties(
              "drops",
              "count: 3\nproperties: {LD_PRELOAD: /tmp/evil.so}",
              "\"A=B\": x\nNUL: \"a\\0b\"\n\"BASH_FUNC_x%%\": \"() { id; }\"\nBIG: "
                  + "y".repeat(100_000)));
      a.awaitAllocatable("akri.sh/drops", 3, WAIT);
      // A change elsewhere in the spec (capacity) does not log the same drops again.
      a.writeConfig(
          "drops",
          withBrokerProperties(
                  "drops",
                  "count: 3\nproperties: {LD_PRELOAD: /tmp/evil.so}",
                  "\"A=B\": x\nNUL: \"a\\0b\"\n\"BASH_FUNC_x%%\": \"() { id; }\"\nBIG: "
                      + "y".repeat(100_000))
              .replace("capacity: 1", "capacity: 2"));
      a.awaitAllocatable("akri.sh/drops", 6, WAIT);
      java.util.List<String> lines = logs.messages();
      assertThat(lines.stream().filter(l -> l.contains("\"A=B\" is not given to containers")))
          .hasSize(1);
      assertThat(lines.stream().filter(l -> l.contains("\"NUL\" is not given to containers")))
          .hasSize(1)
          .allMatch(l -> l.contains("NUL character"));
      assertThat(
              lines.stream()
                  .filter(l -> l.contains("\"BASH_FUNC_x%%\" is not given to containers")))
          .hasSize(1);
      assertThat(lines.stream().filter(l -> l.contains("\"BIG\" is not given to containers")))
          .hasSize(1)
          .allMatch(l -> l.contains("longer than 4096"));
      assertThat(
              lines.stream().filter(l -> l.contains("device property \"LD_PRELOAD\" is not given")))
          .hasSize(1)
          .allMatch(l -> l.contains("reserved"));
    }
  }
}
