package io.jakri.agent.cluster;

import java.util.EnumMap;
import java.util.Map;
import java.util.concurrent.atomic.LongAdder;

/**
 * Counts the API requests the agent makes, by verb (for the "requests per device / per Allocate"
 * figures and metrics). Thread-safe.
 */
public final class ApiCalls {

  /** The kinds of request counted. */
  public enum Verb {
    GET,
    CREATE,
    /**
     * A write guarded by the resourceVersion the change was computed from (a PUT, or a JSON patch
     * that sets {@code metadata.resourceVersion}): fails with 409 when someone else wrote first.
     */
    UPDATE,
    /** An unconditional patch (status). */
    PATCH,
    DELETE
  }

  private final Map<Verb, LongAdder> counts = new EnumMap<>(Verb.class);

  public ApiCalls() {
    for (Verb v : Verb.values()) {
      counts.put(v, new LongAdder());
    }
  }

  public void count(Verb verb) {
    counts.get(verb).increment();
  }

  public long get(Verb verb) {
    return counts.get(verb).sum();
  }

  /** A snapshot of all counters. */
  public Map<Verb, Long> snapshot() {
    Map<Verb, Long> copy = new EnumMap<>(Verb.class);
    counts.forEach((v, n) -> copy.put(v, n.sum()));
    return copy;
  }

  /** Requests of every kind so far. */
  public long total() {
    return counts.values().stream().mapToLong(LongAdder::sum).sum();
  }
}
