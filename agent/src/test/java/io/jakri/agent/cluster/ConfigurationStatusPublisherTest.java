package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Condition;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ConfigurationStatusPublisherTest {

  private static Map<String, Object> entry(String state, String message) {
    return Map.of("state", state, "message", message, "devices", 1);
  }

  @Test
  void conditionsAggregateEveryNodesEntryInNodeNameOrder() {
    List<Condition> conditions =
        ConfigurationStatusPublisher.conditions(
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
  }

  @Test
  void transitionTimeIsKeptWhileAConditionHoldsAndRenewedWhenItFlips() {
    List<Map<String, Object>> previous =
        List.of(
            Map.of("type", "Discovering", "status", "True", "lastTransitionTime", "then"),
            Map.of("type", "Invalid", "status", "False", "lastTransitionTime", "then"));

    List<Condition> conditions =
        ConfigurationStatusPublisher.conditions(
            Map.of("a", entry("Invalid", "bad details")), previous, 1, "now");

    assertThat(conditions)
        .extracting(c -> c.getType() + "@" + c.getLastTransitionTime())
        .containsExactly("Discovering@now", "Invalid@now", "HandlerMissing@now", "Failed@now");
    List<Condition> again =
        ConfigurationStatusPublisher.conditions(
            Map.of("a", entry("Invalid", "bad details")),
            List.of(Map.of("type", "Invalid", "status", "True", "lastTransitionTime", "now")),
            1,
            "later");
    assertThat(again.get(1).getLastTransitionTime()).isEqualTo("now");
  }

  @Test
  void twoAgentsSeeingTheSameEntriesComputeTheSameConditions() {
    Map<String, Object> nodes =
        Map.of("n1", entry("Discovering", "x"), "n2", entry("Failed", "handler crashed"));
    List<Condition> one = ConfigurationStatusPublisher.conditions(nodes, List.of(), 2, "t1");
    List<Condition> two = ConfigurationStatusPublisher.conditions(nodes, List.of(), 2, "t2");

    assertThat(one)
        .usingRecursiveFieldByFieldElementComparatorIgnoringFields("lastTransitionTime")
        .isEqualTo(two);
  }
}
