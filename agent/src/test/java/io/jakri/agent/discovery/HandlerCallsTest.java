package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.LogCapture;
import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link HandlerCalls} on its own, over real {@link HandlerThreads}. */
class HandlerCallsTest {

  private static final ConfigurationSpec SPEC =
      new ConfigurationSpec("cams", "fake", "details", List.of(), 1, Map.of(), Optional.empty());

  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final HandlerThreads threads =
      new HandlerThreads(timer, new HandlerLimits(Duration.ofSeconds(5), 2), () -> {});
  private final HandlerCalls calls = new HandlerCalls(threads);
  private final AtomicReference<String> startedOn = new AtomicReference<>();
  private final AtomicReference<String> closedOn = new AtomicReference<>();

  @AfterEach
  void stop() {
    threads.close();
    timer.shutdownNow();
  }

  @Test
  void aValidStartRunsOnTheHandlersThreadWithItsContext() throws Exception {
    DiscoveryHandler handler = handler(Validation.ok(), false);
    DiscoveryContext context = calls.context(handler, "fake", SPEC, "node-a", Map.of("K", "v"));
    assertThat(context.configurationName()).isEqualTo("cams");
    assertThat(context.nodeName()).isEqualTo("node-a");
    assertThat(context.discoveryDetails()).isEqualTo("details");
    assertThat(context.discoveryProperties()).isEqualTo(Map.of("K", "v"));
    assertThat(context.scheduler()).isSameAs(threads.scheduler(handler, "fake"));

    Discovery discovery =
        calls.start(handler, "fake", context, listener()).get(10, TimeUnit.SECONDS);
    assertThat(startedOn.get()).startsWith("jakri-handler-fake-");

    calls.close(handler, "fake", "cams", discovery).get(10, TimeUnit.SECONDS);
    assertThat(closedOn.get()).startsWith("jakri-handler-fake-");
  }

  @Test
  void invalidDetailsAreRefusedBeforeTheStartAndWarningsLogged() {
    DiscoveryHandler handler =
        handler(new Validation(List.of("port: not a number"), List.of("host: unused")), false);
    DiscoveryContext context = calls.context(handler, "fake", SPEC, "node-a", Map.of());
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      assertThatThrownBy(
              () -> calls.start(handler, "fake", context, listener()).get(10, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .hasCauseInstanceOf(InvalidDetailsException.class)
          .hasRootCauseMessage("port: not a number");
      assertThat(logs.messages()).contains("configuration cams: host: unused");
    }
    assertThat(startedOn.get()).isNull();
  }

  @Test
  void aCloseThatThrowsIsLoggedAndStillCompletes() throws Exception {
    DiscoveryHandler handler = handler(Validation.ok(), true);
    DiscoveryContext context = calls.context(handler, "fake", SPEC, "node-a", Map.of());
    Discovery discovery =
        calls.start(handler, "fake", context, listener()).get(10, TimeUnit.SECONDS);
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      calls.close(handler, "fake", "cams", discovery).get(10, TimeUnit.SECONDS);
      calls.closeLate(handler, "fake", "cams", discovery);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  logs.messages().stream()
                          .filter(
                              m ->
                                  m.startsWith(
                                      "configuration cams: handler close failed:"
                                          + " java.lang.IllegalStateException: stuck"))
                          .count()
                      == 2);
    }
  }

  @Test
  void failedStartsAreReportedByCause() {
    assertThat(
            HandlerCalls.failure(
                "fake", new CompletionException(new InvalidDetailsException("bad port"))))
        .isEqualTo(
            new HandlerCalls.StartFailure(
                HandlerFailure.INVALID_DETAILS,
                State.INVALID,
                "invalid discoveryDetails: bad port"));
    assertThat(
            HandlerCalls.failure(
                "fake", new CompletionException(new HandlerThreads.CallFailure("too many", true))))
        .isEqualTo(
            new HandlerCalls.StartFailure(HandlerFailure.STRANDED_LIMIT, State.FAILED, "too many"));
    assertThat(HandlerCalls.failure("fake", new HandlerThreads.CallFailure("timed out", false)))
        .isEqualTo(
            new HandlerCalls.StartFailure(HandlerFailure.START_TIMEOUT, State.FAILED, "timed out"));
    assertThat(HandlerCalls.failure("fake", new IllegalStateException("boom")))
        .isEqualTo(
            new HandlerCalls.StartFailure(
                HandlerFailure.START_FAILED,
                State.FAILED,
                "handler fake failed to start: java.lang.IllegalStateException: boom"));
  }

  private static DeviceListener listener() {
    return new DeviceListener() {
      @Override
      public void devices(List<DiscoveredDevice> devices) {}

      @Override
      public void failed(String reason, Throwable cause) {}
    };
  }

  private DiscoveryHandler handler(Validation validation, boolean closeThrows) {
    return new DiscoveryHandler() {
      @Override
      public String name() {
        return "fake";
      }

      @Override
      public Validation validate(DiscoveryContext context) {
        return validation;
      }

      @Override
      public Discovery start(DiscoveryContext context, DeviceListener listener) {
        startedOn.set(Thread.currentThread().getName());
        return () -> {
          closedOn.set(Thread.currentThread().getName());
          if (closeThrows) {
            throw new IllegalStateException("stuck");
          }
        };
      }
    };
  }
}
