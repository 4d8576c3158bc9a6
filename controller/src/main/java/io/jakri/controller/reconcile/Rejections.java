package io.jakri.controller.reconcile;

import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Which Instances of which Configuration currently have an object the API server refused to create
 * (an invalid brokerSpec or service spec, or a create forbidden by admission), with the server's
 * message. Recorded by {@link InstanceReconciler}, cleared when that Instance reconciles cleanly,
 * read by {@link ConfigurationReconciler} for the {@code BrokersReady} condition. In memory only:
 * after a restart the next failing create records it again. Thread-safe.
 */
public final class Rejections {

  /** One refusal: the condition's reason and the server's message. */
  public record Rejection(String reason, String message) {}

  private final Map<String, Map<String, Rejection>> byConfiguration = new ConcurrentHashMap<>();

  /** Records that {@code instance} of {@code configuration} was refused. */
  public void record(String configuration, String instance, String reason, String message) {
    byConfiguration
        .computeIfAbsent(configuration, c -> new ConcurrentHashMap<>())
        .put(instance, new Rejection(reason, message));
  }

  /** Forgets {@code instance}'s rejection; returns whether there was one. */
  public boolean clear(String configuration, String instance) {
    Map<String, Rejection> m = byConfiguration.get(configuration);
    return m != null && m.remove(instance) != null;
  }

  /** Forgets everything about {@code configuration}. */
  public void forget(String configuration) {
    byConfiguration.remove(configuration);
  }

  /** The first rejection of {@code configuration} (by Instance name), if any. */
  public Optional<Rejection> first(String configuration) {
    Map<String, Rejection> m = byConfiguration.get(configuration);
    if (m == null || m.isEmpty()) {
      return Optional.empty();
    }
    return new TreeMap<>(m).values().stream().findFirst();
  }
}
