package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.testkit.RecordingListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The polling engine with a scripted {@link ServerFinder}; OpcuaNodeOpcuaIT runs it for real. */
class OpcuaDiscoveryTest {

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private final RecordingListener listener = new RecordingListener();
  private final AtomicInteger closes = new AtomicInteger();
  private final RequestSlots slots = new RequestSlots(OpcuaHandler.MAX_REQUESTS);

  /** Every request, in order, with the future the finder handed out. */
  private final List<Map.Entry<String, CompletableFuture<List<Application>>>> requests =
      new CopyOnWriteArrayList<>();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private OpcuaDiscovery start(String yaml, Duration deadline) throws Exception {
    OpcuaDetails details = OpcuaDetails.parse(yaml).orThrow();
    ServerFinder finder =
        url -> {
          CompletableFuture<List<Application>> future = new CompletableFuture<>();
          requests.add(Map.entry(url.text(), future));
          return future;
        };
    OpcuaDiscovery discovery =
        new OpcuaDiscovery(
            "test",
            details,
            listener,
            scheduler,
            finder,
            host -> true,
            deadline,
            slots,
            closes::incrementAndGet);
    discovery.start();
    return discovery;
  }

  private static String yaml(int pollSeconds, String... urls) {
    return "opcuaDiscoveryMethod: {standard: {discoveryUrls: ["
        + String.join(", ", urls)
        + "]}}\npollIntervalSeconds: "
        + pollSeconds;
  }

  private List<CompletableFuture<List<Application>>> pending(String url) {
    return requests.stream()
        .filter(e -> e.getKey().equals(url) && !e.getValue().isDone())
        .map(Map.Entry::getValue)
        .toList();
  }

  private void answer(String url, Application... apps) {
    await().atMost(Duration.ofSeconds(10)).until(() -> !pending(url).isEmpty());
    pending(url).get(0).complete(List.of(apps));
  }

  private static Application server(String url) {
    return new Application(url, Application.Type.SERVER, List.of(url));
  }

  @Test
  void urlThatFailsDropsItsServersAtOnceWhileTheOthersStay() throws Exception {
    String a = "opc.tcp://a:1/";
    String b = "opc.tcp://b:1/";
    start(yaml(1, a, b), Duration.ofSeconds(30));
    answer(a, server("opc.tcp://a-srv:1/"));
    answer(b, server("opc.tcp://b-srv:1/"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () -> listener.lastIds().equals(List.of("opc.tcp://a-srv:1/", "opc.tcp://b-srv:1/")));

    await().atMost(Duration.ofSeconds(10)).until(() -> !pending(a).isEmpty());
    pending(a).get(0).completeExceptionally(new RuntimeException("connection refused"));

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> listener.lastIds().equals(List.of("opc.tcp://b-srv:1/")));
    assertThat(listener.last().orElseThrow().get(0).properties())
        .isEqualTo(Map.of("OPCUA_DISCOVERY_URL", "opc.tcp://b-srv:1/"));
    assertThat(listener.last().orElseThrow().get(0).shared()).isTrue();
  }

  @Test
  void neverTwoRequestsInFlightForOneUrl() throws Exception {
    start(yaml(1, "opc.tcp://slow:1/"), Duration.ofSeconds(30));

    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 1);
    // Three poll intervals pass with the first request unanswered: no second one.
    await()
        .during(Duration.ofMillis(3000))
        .atMost(Duration.ofSeconds(5))
        .until(() -> requests.size() == 1);

    requests.get(0).getValue().complete(List.of());
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 2);
  }

  @Test
  void requestThatNeverEndsIsGivenUpAtTheDeadline() throws Exception {
    start(yaml(1, "opc.tcp://hang:1/"), Duration.ofMillis(200));

    await().atMost(Duration.ofSeconds(10)).until(() -> requests.size() >= 2);
    assertThat(requests.get(0).getValue()).isCompletedExceptionally();
    assertThat(listener.snapshots()).isNotEmpty().allMatch(List::isEmpty);
  }

  @Test
  void atMostSixteenRequestsOfOneConfigurationRunAtOnce() throws Exception {
    String[] urls = new String[20];
    for (int i = 0; i < urls.length; i++) {
      urls[i] = "opc.tcp://h" + i + ":1/";
    }
    start(yaml(60, urls), Duration.ofSeconds(30));

    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 16);
    await().during(Duration.ofMillis(500)).until(() -> requests.size() == 16);
    requests.get(0).getValue().complete(List.of());
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 17);
  }

  @Test
  void backOffDoublesForDeadUrlsUpToAMinuteOrTheInterval() {
    Duration ten = Duration.ofSeconds(10);
    assertThat(OpcuaDiscovery.delay(ten, 0)).isEqualTo(ten);
    assertThat(OpcuaDiscovery.delay(ten, 1)).isEqualTo(ten);
    assertThat(OpcuaDiscovery.delay(ten, 2)).isEqualTo(Duration.ofSeconds(20));
    assertThat(OpcuaDiscovery.delay(ten, 3)).isEqualTo(Duration.ofSeconds(40));
    assertThat(OpcuaDiscovery.delay(ten, 4)).isEqualTo(Duration.ofSeconds(60));
    assertThat(OpcuaDiscovery.delay(ten, 400)).isEqualTo(Duration.ofSeconds(60));
    assertThat(OpcuaDiscovery.delay(Duration.ofSeconds(600), 5)).isEqualTo(Duration.ofSeconds(600));
  }

  @Test
  void nothingIsReportedAfterCloseAndCloseIsIdempotent() throws Exception {
    OpcuaDiscovery discovery = start(yaml(1, "opc.tcp://a:1/"), Duration.ofSeconds(30));
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 1);

    discovery.close();
    discovery.close();
    requests.get(0).getValue().complete(List.of(server("opc.tcp://late:1/")));

    await().during(Duration.ofMillis(300)).until(() -> listener.snapshots().isEmpty());
    assertThat(closes.get()).isEqualTo(1);
  }

  @Test
  void closeGivesUpEveryRequestInFlightAndItsSlotAtOnce() throws Exception {
    OpcuaDiscovery discovery =
        start(yaml(1, "opc.tcp://a:1/", "opc.tcp://b:1/", "opc.tcp://c:1/"), Duration.ofMinutes(5));
    await().atMost(Duration.ofSeconds(5)).until(() -> requests.size() == 3);
    assertThat(slots.used()).isEqualTo(3);

    discovery.close();

    // Not at the deadline five minutes on: the finder lets its clients go, the handler its slots.
    assertThat(requests).allSatisfy(r -> assertThat(r.getValue()).isCompletedExceptionally());
    assertThat(slots.used()).isZero();
  }

  @Test
  void noUrlsReportsOneEmptySnapshot() throws Exception {
    start("opcuaDiscoveryMethod: {standard: {discoveryUrls: []}}", Duration.ofSeconds(30));

    await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 1);
    assertThat(listener.snapshots().get(0)).isEmpty();
    assertThat(requests).isEmpty();
  }

  @Test
  void sameServerSeenThroughTwoUrlsIsOneDevice() throws Exception {
    start(yaml(60, "opc.tcp://lds1:1/", "opc.tcp://lds2:1/"), Duration.ofSeconds(30));
    answer("opc.tcp://lds1:1/", server("opc.tcp://plc:4840/"));
    answer("opc.tcp://lds2:1/", server("opc.tcp://plc:4840/"), server("opc.tcp://plc2:4840/"));

    await()
        .atMost(Duration.ofSeconds(5))
        .until(
            () ->
                listener.lastIds().equals(List.of("opc.tcp://plc:4840/", "opc.tcp://plc2:4840/")));
  }
}
