package io.jakri.agent.deviceplugin;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import io.jakri.kubelet.v1beta1.Empty;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registers {@link DevicePluginManager}'s serving resources with the current kubelet and retries
 * with backoff (50 ms doubling to 5 s) while {@code kubelet.sock} is missing or refuses. A Register
 * answered by an older kubelet, or for a resource retired meanwhile, changes nothing: a later round
 * handles it. Confined to the manager's control thread (answers are handled there too).
 */
final class Registrations {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(50);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  /** The manager's start-and-register rounds, as registration ends them. */
  interface Rounds {
    /** Ends round {@code round} of {@code entry} if that is the one it holds. */
    void release(ServedResource entry, long round);

    /** Starts a new server for {@code entry}; it registers once serving. */
    void serveAgain(ServedResource entry);

    /**
     * Queues a Register of {@code entry}'s current server: it waits its turn among every resource
     * waiting for a round, fairly across Configurations, within the bound of rounds in flight.
     */
    void registerAgain(ServedResource entry);
  }

  private final KubeletConnection kubelet;
  private final Map<String, ServedResource> entries;
  private final ScheduledExecutorService scheduler;
  private final Executor control;
  private final BooleanSupplier closed;
  private final Rounds rounds;
  private final Consumer<DevicePluginEvent> events;

  Registrations(
      KubeletConnection kubelet,
      Map<String, ServedResource> entries,
      ScheduledExecutorService scheduler,
      Executor control,
      BooleanSupplier closed,
      Rounds rounds,
      Consumer<DevicePluginEvent> events) {
    this.kubelet = kubelet;
    this.entries = entries;
    this.scheduler = scheduler;
    this.control = control;
    this.closed = closed;
    this.rounds = rounds;
    this.events = events;
  }

  /** Sends Register for {@code entry}'s current server, or schedules a retry. Control thread. */
  void register(ServedResource entry) {
    if (closed.getAsBoolean()
        || entry.server == null
        || !entries.containsKey(entry.backend.resourceName())) {
      rounds.release(entry, entry.round);
      return;
    }
    entry.cancelRetry();
    long g = kubelet.generation();
    if (g == 0 || !kubelet.present()) {
      rounds.release(entry, entry.round);
      retryLater(entry); // kubelet not (yet) there
      return;
    }
    long round = entry.round;
    entry.inFlightGeneration = g;
    String endpoint = entry.server.endpoint();
    String resource = entry.backend.resourceName();
    Futures.addCallback(
        kubelet.register(resource, endpoint),
        new FutureCallback<Empty>() {
          @Override
          public void onSuccess(Empty result) {
            rounds.release(entry, round);
            if (entry.inFlightGeneration == g) {
              entry.inFlightGeneration = -1;
            }
            if (g != kubelet.generation() || entries.get(resource) != entry) {
              return; // a newer kubelet or a retired resource: a later round handles it
            }
            boolean again = entry.everRegistered;
            entry.registeredGeneration = g;
            entry.everRegistered = true;
            entry.attempts = 0;
            LOG.info("resource {}: registered with the kubelet as {}", resource, endpoint);
            events.accept(new DevicePluginEvent.Registered(resource, endpoint, again));
          }

          @Override
          public void onFailure(Throwable t) {
            rounds.release(entry, round);
            if (entry.inFlightGeneration == g) {
              entry.inFlightGeneration = -1;
            }
            if (entries.get(resource) != entry) {
              return;
            }
            String reason = rootMessage(t);
            if (entry.attempts % 10 == 0) {
              LOG.warn(
                  "resource {}: registration failed (attempt {}): {}",
                  resource,
                  entry.attempts + 1,
                  reason);
            }
            events.accept(new DevicePluginEvent.RegistrationFailed(resource, reason));
            retryLater(entry);
          }
        },
        this::onControl);
  }

  /**
   * Runs a Register answer on the control thread; an answer that arrives after the agent stopped
   * (the control executor is shut down) no longer matters and is dropped, instead of Guava logging
   * the rejection with a stack trace at ERROR.
   */
  private void onControl(Runnable task) {
    try {
      control.execute(task);
    } catch (RejectedExecutionException e) {
      LOG.debug("a Register answer arrived after shutdown; dropped");
    }
  }

  /**
   * After the entry's backoff, serves it again (when it has no server) or queues its Register,
   * unless it was retired or a start is already under way. Retries go through the same fair,
   * bounded queue as first registrations: sent straight to the kubelet, thousands of retries of one
   * big Configuration piled up at a slow kubelet, each ran into the Register deadline and was
   * retried again, and a new small Configuration waited behind them all. Control thread.
   */
  void retryLater(ServedResource entry) {
    entry.cancelRetry();
    long delay =
        Math.min(MAX_BACKOFF.toMillis(), MIN_BACKOFF.toMillis() << Math.min(entry.attempts, 10));
    entry.attempts++;
    entry.retry =
        scheduler.schedule(
            () ->
                control.execute(
                    () -> {
                      if (entries.get(entry.backend.resourceName()) != entry) {
                        return;
                      }
                      if (entry.starting || entry.queued) {
                        return;
                      }
                      if (entry.server == null) {
                        rounds.serveAgain(entry); // registers once serving
                      } else {
                        rounds.registerAgain(entry); // never around the queue: see #retryLater
                      }
                    }),
            delay,
            TimeUnit.MILLISECONDS);
  }

  /** The message of {@code t}, with its root cause when that is another exception. */
  static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = t.getMessage() == null ? t.toString() : t.getMessage();
    return root == t ? message : message + " (" + root + ")";
  }
}
