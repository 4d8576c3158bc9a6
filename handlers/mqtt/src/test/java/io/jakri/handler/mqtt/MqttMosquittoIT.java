package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.eclipse.paho.client.mqttv3.IMqttMessageListener;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged plugin against a real mosquitto (one per class, on a free loopback port), devices
 * announced, updated and removed with {@code mosquitto_pub -r}. Skipped without mosquitto, failed
 * under {@code CI=true}.
 */
class MqttMosquittoIT {

  private static Path dir;
  private static Mosquitto broker;
  private static PluginJar plugin;
  private static ScheduledExecutorService scheduler;

  @BeforeAll
  static void startBroker() throws Exception {
    dir = Files.createTempDirectory("jakri-mqtt-it");
    broker = NeedsMosquitto.start(dir);
    Path plugins = Files.createDirectories(dir.resolve("plugins"));
    plugin = PluginJar.loadPackaged(plugins);
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

  private static Discovery start(String name, String details, RecordingListener listener)
      throws Exception {
    return plugin
        .handler()
        .start(new DiscoveryContext(name, "node-a", details, Map.of(), scheduler), listener);
  }

  private static Optional<DiscoveredDevice> device(RecordingListener listener, String id) {
    return listener.last().flatMap(l -> l.stream().filter(d -> d.id().equals(id)).findFirst());
  }

  @Test
  void homeAssistantAnnounceUpdateAndRemove() throws Exception {
    String topic = "ha1/sensor/kitchen/temp/config";
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery =
        start("ha", "brokers: [" + broker.url() + "]\nprefix: ha1\ngracePeriod: 1m", listener)) {
      broker.retain(
          topic,
          """
          {"name": "Kitchen temperature", "uniq_id": "kitchen-temp-1", "~": "kitchen/temp",
           "stat_t": "~/state", "dev": {"name": "Kitchen", "mf": "Acme", "mdl": "T1", "sw": "1.0"}}
          """);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> device(listener, "kitchen-temp-1").isPresent());
      DiscoveredDevice d = device(listener, "kitchen-temp-1").get();
      assertThat(d.shared()).isTrue();
      assertThat(d.properties())
          .containsEntry("MQTT_BROKER", broker.url())
          .containsEntry("MQTT_TOPIC", topic)
          .containsEntry("MQTT_COMPONENT", "sensor")
          .containsEntry("MQTT_NODE_ID", "kitchen")
          .containsEntry("MQTT_OBJECT_ID", "temp")
          .containsEntry("MQTT_NAME", "Kitchen temperature")
          .containsEntry("MQTT_DEVICE_NAME", "Kitchen")
          .containsEntry("MQTT_MANUFACTURER", "Acme")
          .containsEntry("MQTT_MODEL", "T1")
          .containsEntry("MQTT_SW_VERSION", "1.0")
          .containsEntry("MQTT_STATE_TOPIC", "kitchen/temp/state");

      broker.retain(
          topic,
          """
          {"name": "Kitchen temperature", "unique_id": "kitchen-temp-1",
           "device": {"name": "Kitchen", "manufacturer": "Acme", "model": "T1",
                      "sw_version": "2.0"}}
          """);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  device(listener, "kitchen-temp-1")
                      .map(x -> "2.0".equals(x.properties().get("MQTT_SW_VERSION")))
                      .orElse(false));

      broker.retain(topic, "");
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().isEmpty());
      assertThat(listener.failures()).isEmpty();
    }
  }

  @Test
  void retainedAnnouncementsPublishedBeforeStartAreFound() throws Exception {
    broker.retain("ha2/light/lamp/config", "{\"unique_id\": \"lamp\", \"cmd_t\": \"lamp/set\"}");
    broker.retain("ha2/switch/pump/config", "{\"unique_id\": \"pump\"}");
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery =
        start(
            "ha2", "brokers: [" + broker.url() + "]\nprefix: ha2\ncomponents: [light]", listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().contains("lamp"));
      assertThat(listener.lastIds()).containsExactly("lamp");
      assertThat(device(listener, "lamp").get().properties())
          .containsEntry("MQTT_COMMAND_TOPIC", "lamp/set");
    } finally {
      broker.retain("ha2/light/lamp/config", "");
      broker.retain("ha2/switch/pump/config", "");
    }
  }

  @Test
  void genericModeReadsIdAndPropertiesByJsonPointer() throws Exception {
    RecordingListener listener = new RecordingListener();
    String details =
        """
        brokers: [%s]
        mode: generic
        topics: [gen/+/info]
        id: /serial
        properties: {MQTT_FIRMWARE: /fw/version, MQTT_MODEL: /model}
        models: [M2]
        """
            .formatted(broker.url());
    try (Discovery discovery = start("gen", details, listener)) {
      broker.retain(
          "gen/a/info",
          "{\"serial\": \"SN-1\", \"fw\": {\"version\": \"3.1\"}, \"model\": \"M2\"}");
      broker.retain("gen/b/info", "{\"serial\": \"SN-2\", \"model\": \"M3\"}");
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().contains("SN-1"));
      assertThat(device(listener, "SN-1").get().properties())
          .containsEntry("MQTT_FIRMWARE", "3.1")
          .containsEntry("MQTT_TOPIC", "gen/a/info");
      broker.retain("gen/a/info", "");
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().isEmpty());
    } finally {
      broker.retain("gen/b/info", "");
    }
  }

  @Test
  void closeEndsPahosThreads() throws Exception {
    RecordingListener listener = new RecordingListener();
    Discovery discovery =
        start("threads", "brokers: [" + broker.url() + "]\nprefix: thr", listener);
    broker.retain("thr/sensor/t/config", "{\"unique_id\": \"t\"}");
    await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().contains("t"));
    assertThat(pahoThreads()).isNotEmpty();
    discovery.close();
    await().atMost(Duration.ofSeconds(10)).until(() -> pahoThreads().isEmpty());
    broker.retain("thr/sensor/t/config", "");
  }

  /** Paho names its threads "MQTT Rec: <client id>" and so on; ours start with "jakri". */
  private static List<String> pahoThreads() {
    return Thread.getAllStackTraces().keySet().stream()
        .map(Thread::getName)
        .filter(n -> n.startsWith("MQTT") && n.contains("jakri"))
        .toList();
  }

  /**
   * Announce → device reported, by the handler (through the plugin jar) and by a bare Paho client
   * subscribed to the same topics (the floor), both timed from just before an in-process Paho
   * publisher sends the retained config. Logs {@code MQTT_TIMING}.
   */
  @Test
  void timingAgainstABarePahoClient() throws Exception {
    int rounds = 50;
    Map<String, Long> reported = new ConcurrentHashMap<>();
    Map<String, Long> arrived = new ConcurrentHashMap<>();
    DeviceListener timed =
        new DeviceListener() {
          @Override
          public void devices(List<DiscoveredDevice> devices) {
            long now = System.nanoTime();
            devices.forEach(d -> reported.putIfAbsent(d.id(), now));
          }

          @Override
          public void failed(String reason, Throwable cause) {}
        };
    MqttClient floor = new MqttClient(broker.url(), "bench-floor", new MemoryPersistence());
    MqttClient publisher = new MqttClient(broker.url(), "bench-pub", new MemoryPersistence());
    floor.connect(new MqttConnectOptions());
    publisher.connect(new MqttConnectOptions());
    floor.subscribe(
        new String[] {"bench/+/+/config", "bench/+/+/+/config"},
        new int[] {1, 1},
        new IMqttMessageListener[] {
          (t, m) -> arrived.putIfAbsent(t, System.nanoTime()),
          (t, m) -> arrived.putIfAbsent(t, System.nanoTime())
        });
    List<Long> handler = new ArrayList<>();
    List<Long> bare = new ArrayList<>();
    try (Discovery discovery =
        plugin
            .handler()
            .start(
                new DiscoveryContext(
                    "bench",
                    "node-a",
                    "brokers: [" + broker.url() + "]\nprefix: bench",
                    Map.of(),
                    scheduler),
                timed)) {
      // The first round also waits for the handler's connection; it is not counted.
      for (int i = -1; i < rounds; i++) {
        String id = "b" + i;
        String topic = "bench/sensor/" + id + "/config";
        MqttMessage message =
            new MqttMessage(("{\"unique_id\": \"" + id + "\"}").getBytes(StandardCharsets.UTF_8));
        message.setRetained(true);
        message.setQos(1);
        long begin = System.nanoTime();
        publisher.publish(topic, message);
        await()
            .atMost(Duration.ofSeconds(10))
            .pollInterval(Duration.ofMillis(1))
            .until(() -> reported.containsKey(id) && arrived.containsKey(topic));
        if (i >= 0) {
          handler.add(reported.get(id) - begin);
          bare.add(arrived.get(topic) - begin);
        }
      }
      for (int i = -1; i < rounds; i++) {
        publisher.publish("bench/sensor/b" + i + "/config", new byte[0], 1, true);
      }
    } finally {
      floor.disconnect();
      floor.close();
      publisher.disconnect();
      publisher.close();
    }
    Collections.sort(handler);
    Collections.sort(bare);
    System.out.printf(
        "MQTT_TIMING rounds=%d announce->reported: handler median=%.2f ms p90=%.2f ms;"
            + " floor (bare paho subscriber) median=%.2f ms p90=%.2f ms%n",
        rounds,
        handler.get(rounds / 2) / 1e6,
        handler.get(rounds * 9 / 10) / 1e6,
        bare.get(rounds / 2) / 1e6,
        bare.get(rounds * 9 / 10) / 1e6);
    assertThat(handler).hasSize(rounds);
  }
}
