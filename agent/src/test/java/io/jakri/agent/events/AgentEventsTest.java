package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.MutableClock;
import io.jakri.agent.allocation.SlotConflict;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.cluster.ObjectRef;
import io.jakri.agent.deviceplugin.DevicePluginReport;
import io.jakri.agent.discovery.PluginHandlerRegistry;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;

class AgentEventsTest {

  record Recorded(ObjectRef ref, String type, String reason, String message) {}

  final List<Recorded> recorded = new CopyOnWriteArrayList<>();
  final Events events =
      new Events() {
        @Override
        public void normal(ObjectRef ref, String reason, String message) {
          recorded.add(new Recorded(ref, "Normal", reason, message));
        }

        @Override
        public void warning(ObjectRef ref, String reason, String message) {
          recorded.add(new Recorded(ref, "Warning", reason, message));
        }
      };
  final MutableClock clock = new MutableClock();

  AgentEvents agentEvents(int budget) {
    return new AgentEvents(
        events,
        "node-a",
        "devices",
        name -> Optional.ofNullable(Map.of("cam-1", "uid-cam-1").get(name)),
        clock,
        new RegistrationFailures(3),
        new ConflictStorms(clock, 4, Duration.ofSeconds(30), 100),
        budget,
        Duration.ofMinutes(10));
  }

  static AgentReport failed(String resource, String reason) {
    return new AgentReport.DevicePlugin(
        new DevicePluginReport.RegistrationFailed(resource, reason));
  }

  static AgentReport registered(String resource, String endpoint, boolean again) {
    return new AgentReport.DevicePlugin(
        new DevicePluginReport.Registered(resource, endpoint, again));
  }

  static AgentReport retired(String resource) {
    return new AgentReport.DevicePlugin(new DevicePluginReport.Retired(resource));
  }

  static AgentReport lostWrites(String instance, int conflicts) {
    return new AgentReport.Claim(new SlotConflict.LostWrites(instance, conflicts));
  }

  static AgentReport heldElsewhere(String instance) {
    return new AgentReport.Claim(new SlotConflict.HeldElsewhere(instance));
  }

  @Test
  void registerFailingThresholdTimesInARowWarnsOnTheNodeOncePerStreak() {
    AgentEvents e = agentEvents(20);
    for (int i = 0; i < 10; i++) {
      e.accept(failed("akri.sh/cam-1", "UNKNOWN: refused"));
    }
    assertThat(recorded)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.ref()).isEqualTo(ObjectRef.node("node-a", "node-a"));
              assertThat(r.type()).isEqualTo("Warning");
              assertThat(r.reason()).isEqualTo(AgentEvents.REGISTRATION_FAILED);
              assertThat(r.message()).contains("akri.sh/cam-1", "3 times", "UNKNOWN: refused");
            });
    e.accept(registered("akri.sh/cam-1", "cam-1.sock", true));
    e.accept(failed("akri.sh/cam-1", "UNKNOWN: refused"));
    e.accept(failed("akri.sh/cam-1", "UNKNOWN: refused"));
    assertThat(recorded).hasSize(1);
    e.accept(failed("akri.sh/cam-1", "UNKNOWN: refused"));
    assertThat(recorded).hasSize(2);
    assertThat(recorded.get(1)).isEqualTo(recorded.get(0)); // same text: the recorder counts it
  }

  @Test
  void aConflictStormWarnsOnTheInstanceWithItsUid() {
    AgentEvents e = agentEvents(20);
    e.accept(lostWrites("cam-1", 2));
    e.accept(heldElsewhere("cam-1"));
    assertThat(recorded).isEmpty();
    e.accept(heldElsewhere("cam-1"));
    assertThat(recorded)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.ref()).isEqualTo(ObjectRef.instance("devices", "cam-1", "uid-cam-1"));
              assertThat(r.reason()).isEqualTo(AgentEvents.SLOT_CONFLICT_STORM);
              assertThat(r.message()).contains("node-a", "at least 4 slot conflicts within 30s");
            });
    e.accept(heldElsewhere("cam-2"));
    e.accept(lostWrites("cam-2", 3));
    assertThat(recorded).hasSize(2);
    assertThat(recorded.get(1).ref().uid()).isEmpty(); // not cached: matched by name
  }

  @Test
  void aPluginJarThatFailsToLoadWarnsOnTheNode() {
    agentEvents(20)
        .accept(
            new AgentReport.PluginLoadFailed(
                new PluginHandlerRegistry.LoadProblem(
                    Path.of("/plugins/broken.jar"), "not a valid plugin jar")));
    assertThat(recorded)
        .singleElement()
        .satisfies(
            r -> {
              assertThat(r.ref()).isEqualTo(ObjectRef.node("node-a", "node-a"));
              assertThat(r.reason()).isEqualTo(AgentEvents.PLUGIN_LOAD_FAILED);
              assertThat(r.message()).contains("broken.jar", "node-a", "not a valid plugin jar");
            });
  }

  @Test
  void eachReasonHasABudgetPerWindowSoAFloodOfCausesStaysBounded() {
    AgentEvents e = agentEvents(2);
    for (int r = 0; r < 50; r++) {
      for (int i = 0; i < 3; i++) {
        e.accept(failed("akri.sh/res-" + r, "kubelet down"));
      }
    }
    e.accept(
        new AgentReport.PluginLoadFailed(
            new PluginHandlerRegistry.LoadProblem(Path.of("x.jar"), "bad")));
    assertThat(recorded)
        .extracting(Recorded::reason)
        .containsExactly(
            AgentEvents.REGISTRATION_FAILED,
            AgentEvents.REGISTRATION_FAILED,
            AgentEvents.PLUGIN_LOAD_FAILED);
    clock.advance(Duration.ofMinutes(10));
    for (int i = 0; i < 3; i++) {
      e.accept(failed("akri.sh/late", "kubelet down"));
    }
    assertThat(recorded).hasSize(4);
    assertThat(recorded.get(3).message()).contains("akri.sh/late");
  }

  @Test
  void aRetiredResourceForgetsItsStreak() {
    AgentEvents e = agentEvents(20);
    e.accept(failed("akri.sh/cam-1", "x"));
    e.accept(failed("akri.sh/cam-1", "x"));
    e.accept(retired("akri.sh/cam-1"));
    e.accept(failed("akri.sh/cam-1", "x"));
    e.accept(failed("akri.sh/cam-1", "x"));
    assertThat(recorded).isEmpty();
  }
}
