package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.testkit.RecordingListener;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The discovery's lifecycle against fake sessions: grace, reconnect, stale topics, close. */
class MqttDiscoveryTest {

  private static final String B = "tcp://b:1883";
  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private static byte[] config(String id) {
    return ("{\"unique_id\": \"" + id + "\"}").getBytes(StandardCharsets.UTF_8);
  }

  private static String topic(String id) {
    return "homeassistant/sensor/" + id + "/config";
  }

  private MqttDiscovery start(String details, RecordingListener listener, FakeSessions sessions)
      throws Exception {
    MqttDiscovery d =
        new MqttDiscovery("c", MqttDetails.parse(details).orThrow(), listener, scheduler, sessions);
    d.start();
    return d;
  }

  @Test
  void losingTheBrokerKeepsDevicesForTheGracePeriodThenRemovesThemAndReconnects() throws Exception {
    FakeSessions sessions = new FakeSessions();
    RecordingListener listener = new RecordingListener();
    try (MqttDiscovery d = start("brokers: [tcp://b]\ngracePeriod: 400ms", listener, sessions)) {
      FakeSessions.Fake first = sessions.awaitConnect(1);
      first.events().connected(B);
      first.events().message(B, topic("a"), config("a"));
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.lastIds().equals(List.of("a")));

      long lost = System.nanoTime();
      first.events().lost(new java.io.IOException("connection reset"));
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.lastIds().isEmpty());
      assertThat((System.nanoTime() - lost) / 1_000_000).isGreaterThanOrEqualTo(400);
      await().atMost(Duration.ofSeconds(5)).until(first::closed);

      FakeSessions.Fake second = sessions.awaitConnect(2);
      second.events().connected(B);
      second.events().message(B, topic("a"), config("a"));
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.lastIds().equals(List.of("a")));
      // Events of the old session are ignored.
      first.events().message(B, topic("z"), config("z"));
      second.events().message(B, topic("b"), config("b"));
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> listener.lastIds().equals(List.of("a", "b")));
    }
  }

  @Test
  void afterAReconnectWithinTheGraceTopicsNotAnnouncedAgainAreDropped() throws Exception {
    FakeSessions sessions = new FakeSessions();
    RecordingListener listener = new RecordingListener();
    try (MqttDiscovery d = start("brokers: [tcp://b]\ngracePeriod: 1h", listener, sessions)) {
      FakeSessions.Fake first = sessions.awaitConnect(1);
      first.events().connected(B);
      first.events().message(B, topic("a"), config("a"));
      first.events().message(B, topic("b"), config("b"));
      await().atMost(Duration.ofSeconds(5)).until(() -> listener.lastIds().size() == 2);
      first.events().failed(new java.io.IOException("gone"));

      FakeSessions.Fake second = sessions.awaitConnect(2);
      assertThat(listener.lastIds()).containsExactly("a", "b");
      second.events().message(B, topic("a"), config("a"));
      second.events().connected(B);
      await()
          .atMost(MqttDiscovery.SETTLE.plusSeconds(5))
          .until(() -> listener.lastIds().equals(List.of("a")));
    }
  }

  @Test
  void nothingIsReportedOnceCloseReturnedAndTheSessionIsClosed() throws Exception {
    FakeSessions sessions = new FakeSessions();
    RecordingListener listener = new RecordingListener();
    MqttDiscovery d = start("brokers: [tcp://b]", listener, sessions);
    FakeSessions.Fake s = sessions.awaitConnect(1);
    s.events().connected(B);
    d.close();
    d.close();
    s.events().message(B, topic("a"), config("a"));

    await().atMost(Duration.ofSeconds(5)).until(s::closed);
    assertThat(listener.snapshots()).isEmpty();
  }

  @Test
  void startOnlySchedules() throws Exception {
    CountDownLatch parked = new CountDownLatch(1);
    scheduler.execute(
        () -> {
          try {
            parked.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    ScheduledExecutorService one = Executors.newSingleThreadScheduledExecutor();
    try {
      one.execute(
          () -> {
            try {
              parked.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          });
      FakeSessions sessions = new FakeSessions();
      MqttDiscovery d =
          new MqttDiscovery(
              "c",
              MqttDetails.parse("brokers: [tcp://b]").orThrow(),
              new RecordingListener(),
              one,
              sessions);
      d.start();
      assertThat(sessions.created).isEmpty();
      d.close();
      parked.countDown();
      one.shutdown();
      assertThat(one.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      assertThat(sessions.created).isEmpty();
    } finally {
      parked.countDown();
      one.shutdownNow();
    }
  }
}
