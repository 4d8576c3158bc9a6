package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Creates sent but not yet seen in the cache. Without it, a reconcile that runs between a create
 * and the informer's ADD event would send the same create again (and get 409): in a burst of 500
 * Instances that was about one request in ten. An entry is set before the create is sent (so the
 * ADD event, which can only follow the request, always finds it), cleared by that event or by a
 * failed create, and ignored after {@link #TTL} in case an event was lost. Thread-safe.
 */
public final class InFlightCreates {

  /** How long a create without its ADD event suppresses another create of the same object. */
  public static final Duration TTL = Duration.ofSeconds(10);

  private final Map<String, Instant> sent = new ConcurrentHashMap<>();
  private final Clock clock;

  public InFlightCreates(Clock clock) {
    this.clock = clock;
  }

  /** Marks {@code o} as being created; false when a create of it is already in flight. */
  boolean begin(HasMetadata o) {
    Instant now = clock.instant();
    Instant previous = sent.put(key(o), now);
    if (previous != null && previous.plus(TTL).isAfter(now)) {
      sent.put(key(o), previous);
      return false;
    }
    return true;
  }

  /** Forgets {@code o}: its create failed, or the cache has seen it. */
  void done(HasMetadata o) {
    sent.remove(key(o));
  }

  private static String key(HasMetadata o) {
    String kind = o.getKind() == null ? o.getClass().getSimpleName() : o.getKind();
    return kind + "/" + o.getMetadata().getName();
  }
}
