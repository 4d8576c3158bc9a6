package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OpcuaHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String details) {
    return context("opcua-test", details);
  }

  private DiscoveryContext context(String configuration, String details) {
    return new DiscoveryContext(configuration, "node-a", details, Map.of(), scheduler);
  }

  /** One FindServers the scripted finder was asked: by which Configuration, and its future. */
  private record Request(String configuration, CompletableFuture<List<Application>> future) {}

  /** A handler whose finder never answers by itself and records every request. */
  private static OpcuaHandler scripted(List<Request> requests) {
    return new OpcuaHandler(
        (ctx, lease) ->
            url -> {
              CompletableFuture<List<Application>> future = new CompletableFuture<>();
              requests.add(new Request(ctx.configurationName(), future));
              return future;
            },
        host -> true);
  }

  private static String urls(String host, int count) {
    List<String> urls = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      urls.add("opc.tcp://" + host + i + ":4840/");
    }
    return "opcuaDiscoveryMethod: {standard: {discoveryUrls: ["
        + String.join(", ", urls)
        + "]}}\npollIntervalSeconds: 60";
  }

  private static long inFlight(List<Request> requests, String configuration) {
    return requests.stream()
        .filter(r -> configuration == null || r.configuration().equals(configuration))
        .filter(r -> !r.future().isDone())
        .count();
  }

  @Test
  void nameIsAkris() {
    assertThat(new OpcuaHandler().name()).isEqualTo("opcua");
  }

  @Test
  void validateReportsErrorsAndWarnings() {
    Validation validation =
        new OpcuaHandler()
            .validate(
                context(
                    "opcuaDiscoveryMethod: {standard: {discoveryUrls: [\"tcp://x:1/\"]}}\nextra:"
                        + " 1"));

    assertThat(validation.valid()).isFalse();
    assertThat(validation.errors())
        .containsExactly(
            "opcuaDiscoveryMethod.standard.discoveryUrls[0] must be an opc.tcp://host:port/ URL,"
                + " but \"tcp://x:1/\" is not usable: it does not start with opc.tcp://");
    assertThat(validation.warnings())
        .containsExactly("extra is not an opcua setting and is ignored");
  }

  @Test
  void startRefusesInvalidDetailsWithoutStartingThreads() {
    OpcuaHandler handler = new OpcuaHandler();

    assertThatThrownBy(() -> handler.start(context(""), new RecordingListener()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageStartingWith("opcuaDiscoveryMethod is required");
    assertThat(handler.transportActive()).isFalse();
  }

  @Test
  void transportRunsOnlyWhileADiscoveryDoes() throws Exception {
    OpcuaHandler handler =
        new OpcuaHandler((ctx, lease) -> url -> new CompletableFuture<>(), host -> true);
    String details = "opcuaDiscoveryMethod: {standard: {}}";

    Discovery first = handler.start(context(details), new RecordingListener());
    Discovery second = handler.start(context(details), new RecordingListener());
    assertThat(handler.transportActive()).isTrue();
    first.close();
    first.close();
    assertThat(handler.transportActive()).isTrue();
    second.close();
    assertThat(handler.transportActive()).isFalse();
  }

  @Test
  void requestsOfAllConfigurationsTogetherStayWithinTheHandlersBoundAndTakeTurns()
      throws Exception {
    List<Request> requests = new CopyOnWriteArrayList<>();
    OpcuaHandler handler = scripted(requests);
    List<Discovery> discoveries = new ArrayList<>();
    for (String name : List.of("a", "b", "c")) {
      discoveries.add(handler.start(context(name, urls(name, 20)), new RecordingListener()));
    }

    // 16 of a, 16 of b: 32 clients at once, not 48 (16 per Configuration).
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 32);
    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(2))
        .until(() -> requests.size() == 32);
    assertThat(inFlight(requests, "a")).isEqualTo(16);
    assertThat(inFlight(requests, "b")).isEqualTo(16);

    // The slot a gives back goes to c, which has waited longest, though a has URLs waiting too.
    requests.stream()
        .filter(r -> r.configuration().equals("a"))
        .findFirst()
        .orElseThrow()
        .future()
        .complete(List.of());
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 33);
    assertThat(requests.get(32).configuration()).isEqualTo("c");
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> requests.size() == 33 && inFlight(requests, null) == 32);

    discoveries.forEach(Discovery::close);
    assertThat(inFlight(requests, null)).isZero();
  }

  @Test
  void closingAConfigurationGivesUpItsRequestsInFlightAndLeavesTheOthersAlone() throws Exception {
    List<Request> requests = new CopyOnWriteArrayList<>();
    OpcuaHandler handler = scripted(requests);
    Discovery closing = handler.start(context("closing", urls("x", 3)), new RecordingListener());
    Discovery staying = handler.start(context("staying", urls("y", 3)), new RecordingListener());
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 6);

    closing.close();

    // At once, not at the 12 s deadline: nothing of a closed Configuration stays referenced.
    assertThat(inFlight(requests, "closing")).isZero();
    assertThat(inFlight(requests, "staying")).isEqualTo(3);
    staying.close();
    assertThat(inFlight(requests, null)).isZero();
  }
}
