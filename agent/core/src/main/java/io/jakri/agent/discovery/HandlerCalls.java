package io.jakri.agent.discovery;

import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The discovery's calls into a handler, each on the handler's own threads ({@link HandlerThreads}):
 * a start (validated first), a close, a close of a discovery nobody wants any more; and how a start
 * that failed is reported. Any thread.
 */
final class HandlerCalls {

  // Logged as the discovery's own lines (operators grep for them, docs name the logger).
  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  private final HandlerThreads threads;

  HandlerCalls(HandlerThreads threads) {
    this.threads = threads;
  }

  /**
   * How a failed start is reported.
   *
   * @param failure counted for the handler
   * @param state {@link State#INVALID} (not restarted) or {@link State#FAILED} (restarted after a
   *     backoff)
   * @param message the status message (for a restart, without its delay)
   */
  record StartFailure(HandlerFailure failure, State state, String message) {}

  /** What a start of {@code handler} (asked for as {@code name}) for {@code spec} gets. */
  DiscoveryContext context(
      DiscoveryHandler handler,
      String name,
      ConfigurationSpec spec,
      String node,
      Map<String, String> properties) {
    return new DiscoveryContext(
        spec.name(), node, spec.discoveryDetails(), properties, threads.scheduler(handler, name));
  }

  /**
   * Validates {@code context} and starts {@code handler}'s discovery reporting to {@code listener},
   * on the handler's threads. The future completes with the discovery or the failure (see {@link
   * HandlerThreads#call}); a discovery started after the call was abandoned is closed.
   *
   * @param name the name the Configuration asks for the handler by
   */
  CompletableFuture<Discovery> start(
      DiscoveryHandler handler, String name, DiscoveryContext context, DeviceListener listener) {
    String configuration = context.configurationName();
    return threads.call(
        handler,
        name,
        configuration,
        "start",
        () -> {
          Validation validation = handler.validate(context);
          for (String warning : validation.warnings()) {
            LOG.warn("configuration {}: {}", configuration, warning);
          }
          if (!validation.valid()) {
            throw new InvalidDetailsException(String.join("; ", validation.errors()));
          }
          return handler.start(context, listener);
        },
        late -> closeLate(handler, name, configuration, late));
  }

  /**
   * Closes {@code discovery} on the handler's threads. The future completes when the close
   * returned, failed or was abandoned (logged).
   */
  CompletableFuture<?> close(
      DiscoveryHandler handler, String name, String configuration, Discovery discovery) {
    return threads
        .call(
            handler,
            name,
            configuration,
            "close",
            () -> closeQuietly(discovery, configuration),
            null)
        .exceptionally(
            e -> {
              LOG.warn(
                  "configuration {}: handler close did not finish: {}",
                  configuration,
                  e.getMessage());
              return null;
            });
  }

  /** Closes a discovery nobody wants any more, on the handler's threads. */
  void closeLate(DiscoveryHandler handler, String name, String configuration, Discovery d) {
    threads
        .call(handler, name, configuration, "close", () -> closeQuietly(d, configuration), null)
        .exceptionally(e -> null);
  }

  private static Void closeQuietly(Discovery d, String configuration) {
    try {
      d.close();
    } catch (RuntimeException | LinkageError e) {
      LOG.warn("configuration {}: handler close failed: {}", configuration, e.toString());
    }
    return null;
  }

  /** How a start of handler {@code name} that failed with {@code error} is reported. */
  static StartFailure failure(String name, Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    if (cause instanceof InvalidDetailsException) {
      return new StartFailure(
          HandlerFailure.INVALID_DETAILS,
          State.INVALID,
          "invalid discoveryDetails: " + cause.getMessage());
    }
    if (cause instanceof HandlerThreads.CallFailure failure) {
      return new StartFailure(
          failure.refused() ? HandlerFailure.STRANDED_LIMIT : HandlerFailure.START_TIMEOUT,
          State.FAILED,
          failure.getMessage());
    }
    return new StartFailure(
        HandlerFailure.START_FAILED,
        State.FAILED,
        "handler " + name + " failed to start: " + cause);
  }
}
