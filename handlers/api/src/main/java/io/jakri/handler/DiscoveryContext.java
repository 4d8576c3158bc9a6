package io.jakri.handler;

import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What a handler is told about one Configuration on one node.
 *
 * @param configurationName the Configuration's name (for log lines)
 * @param nodeName the node the agent runs on
 * @param discoveryDetails {@code spec.discoveryHandler.discoveryDetails}, YAML text, may be empty
 * @param discoveryProperties resolved {@code discoveryProperties} (name to value); may hold
 *     secrets: never log the values
 * @param scheduler the handler's own scheduler (shared by its Configurations on the node, never
 *     used for the agent's work) for polling and slow work; never block it for long (a task that
 *     runs past the agent's call timeout is logged and its thread abandoned), never shut it down
 */
public record DiscoveryContext(
    String configurationName,
    String nodeName,
    String discoveryDetails,
    Map<String, String> discoveryProperties,
    ScheduledExecutorService scheduler) {

  public DiscoveryContext {
    Objects.requireNonNull(configurationName, "configurationName");
    Objects.requireNonNull(nodeName, "nodeName");
    discoveryDetails = discoveryDetails == null ? "" : discoveryDetails;
    discoveryProperties = Map.copyOf(discoveryProperties == null ? Map.of() : discoveryProperties);
    Objects.requireNonNull(scheduler, "scheduler");
  }
}
