package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigurationConditionsTest {

  private static NodeDiscoveryStatus entry(String state, String message) {
    NodeDiscoveryStatus e = new NodeDiscoveryStatus();
    e.setState(state);
    e.setMessage(message);
    e.setDevices(1);
    return e;
  }

  private static Condition previous(String type, String status, String at) {
    return new ConditionBuilder()
        .withType(type)
        .withStatus(status)
        .withLastTransitionTime(at)
        .build();
  }

  @Test
  void conditionsAggregateEveryNodesEntryInNodeNameOrder() {
    List<Condition> conditions =
        ConfigurationConditions.derive(
            Map.of(
                "b", entry("Discovering", "ok"),
                "a", entry("Discovering", "ok"),
                "c", entry("HandlerMissing", "handler zeroconf is not installed")),
            List.of(),
            3,
            "2026-11-21T10:00:00Z");

    assertThat(conditions)
        .extracting(c -> c.getType() + "=" + c.getStatus() + ":" + c.getMessage())
        .containsExactly(
            "Discovering=True:discovering on 2 node(s): a, b",
            "Invalid=False:",
            "HandlerMissing=True:on node(s) c: handler zeroconf is not installed",
            "Failed=False:");
    assertThat(conditions).allSatisfy(c -> assertThat(c.getObservedGeneration()).isEqualTo(3));
    assertThat(conditions)
        .extracting(Condition::getReason)
        .containsExactly("Discovering", "NotInvalid", "HandlerMissing", "NotFailed");
  }

  @Test
  void transitionTimeIsKeptWhileAConditionHoldsAndRenewedWhenItFlips() {
    List<Condition> conditions =
        ConfigurationConditions.derive(
            Map.of("a", entry("Invalid", "bad details")),
            List.of(previous("Discovering", "True", "then"), previous("Invalid", "False", "then")),
            1,
            "now");

    assertThat(conditions)
        .extracting(c -> c.getType() + "@" + c.getLastTransitionTime())
        .containsExactly("Discovering@now", "Invalid@now", "HandlerMissing@now", "Failed@now");
    List<Condition> again =
        ConfigurationConditions.derive(
            Map.of("a", entry("Invalid", "bad details")),
            List.of(previous("Invalid", "True", "now")),
            1,
            "later");
    assertThat(again.get(1).getLastTransitionTime()).isEqualTo("now");
  }

  @Test
  void noEntriesMeansEveryConditionFalse() {
    assertThat(ConfigurationConditions.derive(Map.of(), List.of(), 1, "t"))
        .extracting(c -> c.getType() + "=" + c.getStatus())
        .containsExactly(
            "Discovering=False", "Invalid=False", "HandlerMissing=False", "Failed=False");
  }

  @Test
  void sameIgnoresOnlyTheTransitionTime() {
    Condition a = ConfigurationConditions.derive(Map.of(), List.of(), 1, "t1").get(0);
    Condition b = ConfigurationConditions.derive(Map.of(), List.of(), 1, "t2").get(0);
    Condition c = ConfigurationConditions.derive(Map.of(), List.of(), 2, "t1").get(0);
    assertThat(ConfigurationConditions.same(a, b)).isTrue();
    assertThat(ConfigurationConditions.same(a, c)).isFalse();
  }
}
