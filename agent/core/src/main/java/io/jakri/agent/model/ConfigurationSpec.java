package io.jakri.agent.model;

import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;

/**
 * What the agent needs from one Configuration (the {@code configurations.akri.sh} resource or a
 * standalone file): immutable, compared by value to decide what changed.
 *
 * @param discoveryDetails the handler's details as YAML text
 * @param brokerSpecKind {@code brokerPodSpec}, {@code brokerJobSpec} or empty
 */
public record ConfigurationSpec(
    String name,
    String handlerName,
    String discoveryDetails,
    List<DiscoveryProperty> discoveryProperties,
    int capacity,
    Map<String, String> brokerProperties,
    Optional<String> brokerSpecKind) {

  public ConfigurationSpec {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(handlerName, "handlerName");
    discoveryDetails = discoveryDetails == null ? "" : discoveryDetails;
    discoveryProperties = List.copyOf(discoveryProperties);
    brokerProperties = java.util.Collections.unmodifiableMap(new LinkedHashMap<>(brokerProperties));
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1");
    }
  }

  /** The default class resource of this Configuration: {@code akri.sh/<name>}. */
  public String defaultClass() {
    return "akri.sh/" + name;
  }

  /** Whether discovery must be restarted to go from this spec to {@code other}. */
  public boolean discoveryDiffers(ConfigurationSpec other) {
    return !handlerName.equals(other.handlerName)
        || !discoveryDetails.equals(other.discoveryDetails)
        || !discoveryProperties.equals(other.discoveryProperties);
  }

  /**
   * One {@code discoveryProperties} entry: a literal value, or a reference to a Secret or ConfigMap
   * key.
   */
  public record DiscoveryProperty(
      String name, Optional<String> value, Optional<KeyRef> valueFrom) {}

  /** A {@code secretKeyRef} / {@code configMapKeyRef}. */
  public record KeyRef(
      Kind kind, String name, String key, Optional<String> namespace, boolean optional) {
    public enum Kind {
      SECRET,
      CONFIG_MAP
    }
  }
}
