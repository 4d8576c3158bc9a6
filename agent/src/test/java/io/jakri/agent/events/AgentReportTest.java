package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class AgentReportTest {

  @Test
  void theComposedConsumerHandsEachEventToEveryConsumerInOrder() {
    List<String> seen = new CopyOnWriteArrayList<>();
    Consumer<AgentReport> stream =
        AgentReport.inOrder(e -> seen.add("metrics"), e -> seen.add("events"));

    stream.accept(new AgentReport.DevicePlugin(new DevicePluginReport.Retired("akri.sh/cam-1")));

    assertThat(seen).containsExactly("metrics", "events");
  }

  @Test
  void aFailingConsumerDoesNotKeepTheEventFromTheNext() {
    List<AgentReport> seen = new CopyOnWriteArrayList<>();
    Consumer<AgentReport> stream =
        AgentReport.inOrder(
            e -> {
              throw new IllegalStateException("a bug in one consumer");
            },
            seen::add);
    AgentReport event = new AgentReport.Claim(new SlotConflict.HeldElsewhere("cam-1"));

    stream.accept(event);

    assertThat(seen).containsExactly(event);
  }
}
