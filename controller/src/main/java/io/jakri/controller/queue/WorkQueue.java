package io.jakri.controller.queue;

import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A de-duplicating work queue processed by a fixed number of workers, in the manner of client-go's
 * rate-limited work queue.
 *
 * <ul>
 *   <li>A key is queued at most once: adding a key already waiting does nothing, so a burst of
 *       events for one key coalesces into one run.
 *   <li>A key is never processed by two workers at once; a key added while it is being processed
 *       runs once more afterwards, so no change is missed.
 *   <li>When the handler throws, the key is retried after a per-key {@link Backoff}; a successful
 *       run resets it. When the handler returns a delay, the key runs again after it (used for
 *       grace periods).
 * </ul>
 *
 * <p>Thread-safe. Workers are tasks on the injected executor (it needs at least {@code workers}
 * threads); delays use the injected scheduler.
 */
public final class WorkQueue<K> implements AutoCloseable {

  /** Processes one key. Returning a delay asks for another run after it. */
  @FunctionalInterface
  public interface Handler<K> {
    Optional<Duration> handle(K key) throws Exception;
  }

  private static final Logger LOG = LoggerFactory.getLogger(WorkQueue.class);

  private final Handler<K> handler;
  private final Backoff backoff;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final RandomGenerator random;
  private final Object lock = new Object();
  private final LinkedHashSet<K> queue = new LinkedHashSet<>();
  private final Set<K> processing = new HashSet<>();
  private final Set<K> dirty = new HashSet<>();
  private final Map<K, Integer> failures = new HashMap<>();
  private final Map<K, Instant> scheduled = new HashMap<>();
  private boolean closed;

  public WorkQueue(
      Handler<K> handler,
      Backoff backoff,
      ScheduledExecutorService scheduler,
      Clock clock,
      RandomGenerator random) {
    this.handler = handler;
    this.backoff = backoff;
    this.scheduler = scheduler;
    this.clock = clock;
    this.random = random;
  }

  /** Starts {@code workers} worker loops on {@code executor}. */
  public void start(int workers, ExecutorService executor) {
    for (int i = 0; i < workers; i++) {
      executor.execute(this::work);
    }
  }

  /** Queues {@code key} unless it is already waiting. Cheap; callable from any thread. */
  public void add(K key) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      if (processing.contains(key)) {
        dirty.add(key);
        return;
      }
      if (queue.add(key)) {
        lock.notify();
      }
    }
  }

  /**
   * Queues {@code key} after {@code delay}. Only the earliest pending delay per key is kept, so
   * asking repeatedly for the same deadline schedules one timer.
   */
  public void addAfter(K key, Duration delay) {
    if (delay.isNegative() || delay.isZero()) {
      add(key);
      return;
    }
    Instant due = clock.instant().plus(delay);
    synchronized (lock) {
      if (closed) {
        return;
      }
      Instant existing = scheduled.get(key);
      if (existing != null && !existing.isAfter(due)) {
        return;
      }
      scheduled.put(key, due);
    }
    scheduler.schedule(
        () -> {
          synchronized (lock) {
            if (!due.equals(scheduled.get(key))) {
              return;
            }
            scheduled.remove(key);
          }
          add(key);
        },
        delay.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /** Keys waiting or being processed (for tests and metrics). */
  public int depth() {
    synchronized (lock) {
      return queue.size() + processing.size();
    }
  }

  /** Stops handing out keys; workers return after their current key. */
  @Override
  public void close() {
    synchronized (lock) {
      closed = true;
      queue.clear();
      lock.notifyAll();
    }
  }

  private void work() {
    while (true) {
      K key;
      synchronized (lock) {
        while (queue.isEmpty() && !closed) {
          try {
            lock.wait();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
          }
        }
        if (closed) {
          return;
        }
        var it = queue.iterator();
        key = it.next();
        it.remove();
        processing.add(key);
      }
      Optional<Duration> again = Optional.empty();
      Duration retry = null;
      try {
        again = handler.handle(key);
        synchronized (lock) {
          failures.remove(key);
        }
      } catch (Exception | LinkageError e) {
        int n;
        synchronized (lock) {
          n = failures.merge(key, 1, Integer::sum);
        }
        retry = backoff.delay(n, random);
        LOG.warn("{}: failed (attempt {}), retrying in {}: {}", key, n, retry, describe(e));
        LOG.debug("{}: failure detail", key, e);
      }
      synchronized (lock) {
        processing.remove(key);
        if (dirty.remove(key) && !closed && retry == null) {
          queue.add(key);
          lock.notify();
        }
      }
      if (retry != null) {
        addAfter(key, retry);
      } else {
        again.ifPresent(d -> addAfter(key, d));
      }
    }
  }

  private static String describe(Throwable e) {
    return e.getClass().getSimpleName() + ": " + e.getMessage();
  }
}
