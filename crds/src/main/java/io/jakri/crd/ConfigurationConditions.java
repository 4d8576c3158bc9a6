package io.jakri.crd;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.TreeMap;

/**
 * The Configuration conditions derived from the agents' {@code status.nodes} entries: a pure
 * function, so whoever writes them (the controller) gets the same result from the same entries.
 * Each node's agent writes only its own entry; the conditions summarise them all.
 */
public final class ConfigurationConditions {

  /** The condition types derived from the nodes' entries, in the order written. */
  public static final List<String> TYPES =
      List.of("Discovering", "Invalid", "HandlerMissing", "Failed");

  private ConfigurationConditions() {}

  /**
   * The conditions for {@code nodes} (node name → entry), in {@link #TYPES} order: a type is {@code
   * True} when some node's state is that type; the message names the nodes (sorted) and the first
   * one's message. A condition keeps its {@code lastTransitionTime} from {@code previous} while its
   * status holds; otherwise it gets {@code now}.
   */
  public static List<Condition> derive(
      Map<String, NodeDiscoveryStatus> nodes,
      List<Condition> previous,
      long generation,
      String now) {
    Map<String, List<String>> byState = new LinkedHashMap<>();
    Map<String, String> firstMessage = new HashMap<>();
    new TreeMap<>(nodes)
        .forEach(
            (node, entry) -> {
              if (entry != null) {
                String state = String.valueOf(entry.getState());
                byState.computeIfAbsent(state, s -> new ArrayList<>()).add(node);
                firstMessage.putIfAbsent(state, String.valueOf(entry.getMessage()));
              }
            });
    List<Condition> result = new ArrayList<>();
    for (String type : TYPES) {
      List<String> on = byState.getOrDefault(type, List.of());
      boolean isTrue = !on.isEmpty();
      String status = isTrue ? "True" : "False";
      String message =
          isTrue
              ? (type.equals("Discovering")
                  ? "discovering on " + on.size() + " node(s): " + String.join(", ", on)
                  : "on node(s) " + String.join(", ", on) + ": " + firstMessage.get(type))
              : "";
      String transition = now;
      for (Condition p : previous) {
        if (type.equals(p.getType())
            && status.equals(p.getStatus())
            && p.getLastTransitionTime() != null) {
          transition = p.getLastTransitionTime();
        }
      }
      result.add(
          new ConditionBuilder()
              .withType(type)
              .withStatus(status)
              .withReason(isTrue ? type : "Not" + type)
              .withMessage(message)
              .withObservedGeneration(generation)
              .withLastTransitionTime(transition)
              .build());
    }
    return result;
  }

  /** Whether two conditions say the same (type, status, reason, message, generation). */
  public static boolean same(Condition a, Condition b) {
    return Objects.equals(a.getType(), b.getType())
        && Objects.equals(a.getStatus(), b.getStatus())
        && Objects.equals(a.getReason(), b.getReason())
        && Objects.equals(a.getMessage(), b.getMessage())
        && Objects.equals(a.getObservedGeneration(), b.getObservedGeneration());
  }
}
