package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Safeguards;
import io.jakri.agent.TestAgent;
import io.jakri.agent.discovery.SlotLimits;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Memory is bounded per Configuration and per agent: devices whose slots (capacity each) would go
 * beyond the limits are refused, with an INVALID status and a metric, and the rest is served.
 */
class SlotLimitsIT {

  private static final Duration WAIT = Duration.ofSeconds(30);

  @TempDir Path tmp;

  @Test
  void aHugeCapacityIsRefusedUnderTheDefaultLimits() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig("huge", TestAgent.configuration("huge", "simulated", 110_000, "count: 1"));
      a.writeConfig("small", TestAgent.configuration("small", "simulated", 2, "count: 1"));
      a.awaitAllocatable("akri.sh/small", 2, WAIT);
      a.awaitRefused("huge", "more than 100000 slots for this Configuration", WAIT);
      assertThat(a.instancesOf("huge")).isZero();
      assertThat(a.agent.metrics().scrape()).contains("jakri_refusals_total{reason=\"SLOTS\"} 1.0");
    }
  }

  @Test
  void devicesBeyondTheConfigurationsLimitAreRefusedTheRestServed() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = start(plugins, new SlotLimits(10, 1_000))) {
      a.writeConfig("big", TestAgent.configuration("big", "simulated", 4, "count: 5"));
      a.awaitRefused("big", "3 devices of capacity 4 refused: more than 10 slots", WAIT);
      a.awaitAllocatable("akri.sh/big", 8, WAIT);
      assertThat(a.instancesOf("big")).isEqualTo(2);

      // A capacity the devices can no longer all have: admitted again within the limit.
      a.writeConfig("big", TestAgent.configuration("big", "simulated", 10, "count: 5"));
      a.awaitRefused("big", "4 devices of capacity 10 refused", WAIT);
      a.awaitAllocatable("akri.sh/big", 10, WAIT);
      await().atMost(WAIT).until(() -> a.instancesOf("big") == 1);
      assertThat(a.slotsHeld("big")).isZero();
    }
  }

  @Test
  void theAgentsLimitIsSharedAndFreedRoomIsTakenUp() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = start(plugins, new SlotLimits(100, 12))) {
      a.writeConfig("first", TestAgent.configuration("first", "simulated", 5, "count: 2"));
      a.awaitAllocatable("akri.sh/first", 10, WAIT);
      a.writeConfig("second", TestAgent.configuration("second", "simulated", 1, "count: 5"));
      a.awaitRefused("second", "more than 12 slots on this agent, 10 of them other", WAIT);
      a.awaitAllocatable("akri.sh/second", 2, WAIT);

      a.deleteConfig("first");
      a.awaitAllocatable("akri.sh/second", 5, WAIT);
      a.awaitDiscovering("second", WAIT);
    }
  }

  @Test
  void devicesWhoseClassResourceTheKubeletWouldRefuseAreRefusedAndTheRestAdvertised()
      throws Exception {
    // A 17-character name and 1,000 slots per device: 97 devices fill the kubelet's 4 MiB
    // ListAndWatch message of the class resource, before the slot limits (100 devices here) bind.
    // (Not longer: the class socket's path in the test's temp dir, whose number may have 20
    // digits, must stay within the 108 bytes of a Unix socket address.)
    String name = "cameras-east-wing";
    long fit = io.jakri.agent.configuration.ConfigurationParser.devicesPerListAndWatch(name, 1000);
    assertThat(fit).isBetween(90L, 99L);
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(name, TestAgent.configuration(name, "simulated", 1000, "count: 100"));
      a.awaitRefused(
          name,
          (100 - fit)
              + " devices of capacity 1000 refused: the class resource's ListAndWatch message"
              + " would be larger than the kubelet accepts (4194304 bytes; "
              + fit
              + " devices at most)",
          WAIT);
      // The class resource at the limit is accepted by the kubelet (the emulator's gRPC client
      // has the kubelet's message limit) and advertised in full.
      a.awaitAllocatable("akri.sh/" + name, fit * 1000, Duration.ofSeconds(60));
      assertThat(a.instancesOf(name)).isEqualTo(fit);
      assertThat(a.agent.metrics().scrape()).contains("jakri_refusals_total{reason=\"SLOTS\"} 1.0");
    }
  }

  private FaultAgent start(Path plugins, SlotLimits limits) throws Exception {
    return FaultAgent.start(
        tmp.resolve("agent"),
        plugins,
        Duration.ofSeconds(1),
        Optional.empty(),
        Safeguards.defaults().withSlotLimits(limits));
  }
}
