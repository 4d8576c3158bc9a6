package io.jakri.agent.instance;

import java.time.Duration;
import java.util.Optional;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Read-modify-write of one Instance with optimistic concurrency: reads the current state, applies a
 * mutation, writes the result (create, update or delete), and on a conflict re-reads and retries
 * after a short random pause, a bounded number of times. Thread-safe.
 */
public final class InstanceUpdates {

  private static final Logger LOG = LoggerFactory.getLogger(InstanceUpdates.class);

  private final InstanceStore store;
  private final RandomGenerator random;
  private final int maxAttempts;
  private final Duration maxJitter;

  public InstanceUpdates(
      InstanceStore store, RandomGenerator random, int maxAttempts, Duration maxJitter) {
    this.store = store;
    this.random = random;
    this.maxAttempts = maxAttempts;
    this.maxJitter = maxJitter;
  }

  public InstanceStore store() {
    return store;
  }

  /** A change to one Instance: given the current state (empty if absent), the desired one. */
  @FunctionalInterface
  public interface Mutation<E extends Exception> {
    Optional<Instance> apply(Optional<Instance> current) throws E;
  }

  /**
   * Applies {@code mutation} until it is stored without conflict. The mutation may run several
   * times and must be a pure function of its input. Returns the stored state (empty when deleted or
   * absent). Exceptions thrown by the mutation abort the update and propagate.
   */
  public <E extends Exception> Optional<Instance> apply(String name, Mutation<E> mutation)
      throws StoreException, E {
    StoreException last = null;
    for (int attempt = 1; attempt <= maxAttempts; attempt++) {
      Optional<Instance> current = store.get(name);
      Optional<Instance> desired = mutation.apply(current);
      try {
        if (current.isEmpty()) {
          return desired.isEmpty() ? desired : Optional.of(store.create(desired.get()));
        }
        if (desired.isEmpty()) {
          store.delete(current.get());
          return desired;
        }
        if (sameContent(current.get(), desired.get())) {
          return current;
        }
        return Optional.of(store.update(desired.get().withVersion(current.get().version())));
      } catch (StoreException.Conflict | StoreException.NotFound e) {
        last = e;
        LOG.debug("instance {}: write conflict on attempt {}, retrying", name, attempt);
        pause(attempt);
      }
    }
    throw last == null
        ? new StoreException.Unavailable("instance " + name + ": no attempt made", null)
        : last;
  }

  private static boolean sameContent(Instance a, Instance b) {
    return a.sameContent(b);
  }

  private void pause(int attempt) {
    long maxNanos = Math.max(1, maxJitter.toNanos() * Math.min(attempt, 8) / 8);
    long nanos = random.nextLong(maxNanos);
    try {
      Thread.sleep(nanos / 1_000_000, (int) (nanos % 1_000_000));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
