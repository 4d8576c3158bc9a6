package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged plugin losing its mosquitto (one per class): devices stay for the grace period and
 * then go; when the broker is back the handler reconnects by itself and finds announcements again.
 */
class MqttBrokerLossIT {

  private static Mosquitto broker;
  private static PluginJar plugin;
  private static ScheduledExecutorService scheduler;

  @BeforeAll
  static void startBroker() throws Exception {
    Path dir = Files.createTempDirectory("jakri-mqtt-loss-it");
    broker = NeedsMosquitto.start(dir);
    plugin = PluginJar.loadPackaged(Files.createDirectories(dir.resolve("plugins")));
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (plugin != null) {
      plugin.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (broker != null) {
      broker.close();
    }
  }

  @Test
  void devicesOutliveTheBrokerForTheGracePeriodAndComeBackAfterAReconnect() throws Exception {
    String topic = "homeassistant/sensor/door/config";
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(
            "loss",
            "node-a",
            "brokers: [" + broker.url() + "]\ngracePeriod: 2s",
            Map.of(),
            scheduler);
    try (Discovery discovery = plugin.handler().start(context, listener)) {
      broker.retain(topic, "{\"unique_id\": \"door\"}");
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> listener.lastIds().equals(List.of("door")));
      int before = listener.snapshots().size();

      long stopped = System.nanoTime();
      broker.stop();
      await().atMost(Duration.ofSeconds(15)).until(() -> listener.lastIds().isEmpty());
      assertThat((System.nanoTime() - stopped) / 1_000_000).isGreaterThanOrEqualTo(2000);
      assertThat(listener.snapshots().subList(before, listener.snapshots().size()))
          .as("nothing reported between the loss and the end of the grace period but the removal")
          .hasSize(1);

      broker.run();
      broker.retain(topic, "{\"unique_id\": \"door\"}");
      await()
          .atMost(Duration.ofSeconds(30))
          .until(() -> listener.lastIds().equals(List.of("door")));
      assertThat(listener.failures()).isEmpty();
      broker.retain(topic, "");
    }
  }
}
