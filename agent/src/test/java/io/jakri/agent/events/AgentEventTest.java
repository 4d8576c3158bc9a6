package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.deviceplugin.DevicePluginEvent;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.Test;

class AgentEventTest {

  @Test
  void theComposedConsumerHandsEachEventToEveryConsumerInOrder() {
    List<String> seen = new CopyOnWriteArrayList<>();
    Consumer<AgentEvent> stream =
        AgentEvent.inOrder(e -> seen.add("metrics"), e -> seen.add("events"));

    stream.accept(new AgentEvent.DevicePlugin(new DevicePluginEvent.Retired("akri.sh/cam-1")));

    assertThat(seen).containsExactly("metrics", "events");
  }

  @Test
  void aFailingConsumerDoesNotKeepTheEventFromTheNext() {
    List<AgentEvent> seen = new CopyOnWriteArrayList<>();
    Consumer<AgentEvent> stream =
        AgentEvent.inOrder(
            e -> {
              throw new IllegalStateException("a bug in one consumer");
            },
            seen::add);
    AgentEvent event = new AgentEvent.Claim(new SlotConflict.HeldElsewhere("cam-1"));

    stream.accept(event);

    assertThat(seen).containsExactly(event);
  }
}
