package io.jakri.bench;

import io.jakri.handler.mqtt.Mosquitto;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.BiConsumer;
import org.eclipse.paho.client.mqttv3.MqttClient;
import org.eclipse.paho.client.mqttv3.MqttConnectOptions;
import org.eclipse.paho.client.mqttv3.MqttMessage;
import org.eclipse.paho.client.mqttv3.persist.MemoryPersistence;

/**
 * MQTT announce → advertised: a real mosquitto on a free loopback port ({@link Mosquitto} from the
 * mqtt handler's test-jar); the agent (standalone, its own JVM, the mqtt handler plugin) with a
 * Configuration in Home Assistant mode (prefix {@code jkbench}); a bare Paho client in this JVM
 * publishes a retained config message ({@code jkbench/sensor/<id>/config}, QoS 1), timed from just
 * before the publish until the emulator sees the class resource with one more healthy device.
 * Floor: a bare Paho MqttClient (the version the handler shades) in this JVM, subscribed to the
 * same topics, receiving the same message, timed from the same moment. Not thread-safe.
 */
final class MqttBench {

  private static final String RESOURCE = "akri.sh/mq";

  private final Bench.Options options;
  private final Path work;
  private final List<String> agentJvm;
  private final BiConsumer<String, Double> add;

  MqttBench(
      Bench.Options options, Path work, List<String> agentJvm, BiConsumer<String, Double> add) {
    this.options = options;
    this.work = work;
    this.agentJvm = agentJvm;
    this.add = add;
  }

  /** Measures, or returns why it could not (mosquitto missing). */
  Optional<String> run(int announces) throws Exception {
    Path root = Files.createDirectories(work.resolve("mqtt"));
    Mosquitto broker;
    try {
      broker = Mosquitto.start(Files.createDirectories(root.resolve("broker")));
    } catch (Mosquitto.Unavailable e) {
      return Optional.of(e.getMessage());
    }
    try (broker) {
      Path plugins = HandlerAgentRun.plugins(options, root, "mqtt");
      Path config = Files.createDirectories(root.resolve("config"));
      HandlerAgentRun.writeConfiguration(
          config,
          "mq",
          "mqtt",
          "brokers: [" + broker.url() + "]\nmode: homeassistant\nprefix: jkbench\n");
      Map<Integer, Long> advertisedAt = new ConcurrentHashMap<>();
      Map<String, Long> receivedAt = new ConcurrentHashMap<>();
      MqttClient floor = new MqttClient(broker.url(), "jkbench-floor", new MemoryPersistence());
      MqttClient publisher = new MqttClient(broker.url(), "jkbench-pub", new MemoryPersistence());
      try (HandlerAgentRun agent =
          HandlerAgentRun.start(
              options,
              agentJvm,
              root,
              config,
              plugins,
              HandlerAgentRun.healthyCounts(RESOURCE, advertisedAt))) {
        floor.connect(new MqttConnectOptions());
        publisher.connect(new MqttConnectOptions());
        // The topics the handler subscribes to in Home Assistant mode.
        for (String filter : List.of("jkbench/+/+/config", "jkbench/+/+/+/config")) {
          floor.subscribe(
              filter, 1, (topic, m) -> receivedAt.putIfAbsent(topic, System.nanoTime()));
        }
        // A warm-up announcement both have seen (also: the agent's broker connection is up).
        announce(publisher, "warm-up");
        agent.await(
            () -> advertisedAt.containsKey(1) && receivedAt.containsKey(topic("warm-up")),
            "mqtt: warm-up announcement");
        List<Double> handler = new ArrayList<>();
        List<Double> bare = new ArrayList<>();
        for (int k = 1; k <= announces; k++) {
          String id = "s" + k;
          int want = k + 1;
          long t0 = announce(publisher, id);
          agent.await(
              () -> advertisedAt.containsKey(want) && receivedAt.containsKey(topic(id)),
              "mqtt: announcement " + id);
          handler.add((advertisedAt.get(want) - t0) / 1e6);
          bare.add((receivedAt.get(topic(id)) - t0) / 1e6);
        }
        System.out.printf("  mqtt: agent %s ms, bare Paho %s ms%n", handler, bare);
        add.accept("mqtt_announce_to_advertised_ms", Stats.median(handler));
        add.accept("paho_announce_to_received_ms", Stats.median(bare));
      } finally {
        for (MqttClient client : List.of(floor, publisher)) {
          if (client.isConnected()) {
            client.disconnect();
          }
          client.close();
        }
      }
    }
    return Optional.empty();
  }

  private static String topic(String id) {
    return "jkbench/sensor/" + id + "/config";
  }

  /** Publishes the retained announcement of {@code id}; returns when it started (nanoTime). */
  private static long announce(MqttClient publisher, String id) throws Exception {
    MqttMessage message =
        new MqttMessage(
            ("{\"unique_id\": \"" + id + "\", \"name\": \"bench " + id + "\"}")
                .getBytes(StandardCharsets.UTF_8));
    message.setQos(1);
    message.setRetained(true);
    long t0 = System.nanoTime();
    publisher.publish(topic(id), message);
    return t0;
  }
}
