package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeCondition;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.Optional;
import java.util.function.Function;

/**
 * Decides when a node's brokers and slots are given up: at once when its Node object is gone, or
 * {@code grace} after its {@code Ready} condition turned False or Unknown. A Node without a Ready
 * condition counts as ready (the kubelet has not reported yet). Pure over the node lookup given;
 * thread-safe.
 */
public final class NodeHealth {

  private final Function<String, Optional<Node>> nodes;
  private final Duration grace;

  /**
   * @param nodes the current Node by name, from a synced cache
   * @param grace how long a NotReady node keeps its place in Instances
   */
  public NodeHealth(Function<String, Optional<Node>> nodes, Duration grace) {
    this.nodes = nodes;
    this.grace = grace;
  }

  /**
   * When {@code node} is to be removed from Instances: {@link Instant#MIN} when it is gone, the end
   * of its NotReady grace, or empty while it is ready.
   */
  public Optional<Instant> evictionTime(String node) {
    Optional<Node> found = nodes.apply(node);
    if (found.isEmpty()) {
      return Optional.of(Instant.MIN);
    }
    if (found.get().getStatus() == null || found.get().getStatus().getConditions() == null) {
      return Optional.empty();
    }
    for (NodeCondition c : found.get().getStatus().getConditions()) {
      if ("Ready".equals(c.getType()) && !"True".equals(c.getStatus())) {
        return Optional.of(since(c).plus(grace));
      }
    }
    return Optional.empty();
  }

  private static Instant since(NodeCondition c) {
    String t = Optional.ofNullable(c.getLastTransitionTime()).orElse(c.getLastHeartbeatTime());
    if (t == null) {
      return Instant.MIN.plus(Duration.ofDays(1));
    }
    try {
      return Instant.parse(t);
    } catch (DateTimeParseException e) {
      return Instant.MIN.plus(Duration.ofDays(1));
    }
  }
}
