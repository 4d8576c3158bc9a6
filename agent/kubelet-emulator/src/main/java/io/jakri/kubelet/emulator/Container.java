package io.jakri.kubelet.emulator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * A container of a {@link Pod} as far as the device manager cares: its name and its resource
 * requests (resource name to count). Only extended resources (names containing {@code /}) are
 * served by device plugins; other entries such as {@code cpu} are ignored by the emulator.
 *
 * @param name container name, unique within the pod
 * @param requests resource name to requested count, iteration order kept
 */
public record Container(String name, Map<String, Long> requests) {

  public Container {
    Objects.requireNonNull(name, "name");
    requests = Collections.unmodifiableMap(new LinkedHashMap<>(requests));
  }

  /** A container that requests nothing. */
  public static Container of(String name) {
    return new Container(name, Map.of());
  }

  /** A container that requests {@code count} of one resource. */
  public static Container of(String name, String resource, long count) {
    return new Container(name, Map.of(resource, count));
  }

  /** A container with the given requests (order kept). */
  public static Container of(String name, Map<String, Long> requests) {
    return new Container(name, requests);
  }
}
