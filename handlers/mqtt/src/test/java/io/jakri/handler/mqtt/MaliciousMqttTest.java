package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.charset.StandardCharsets;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

/**
 * Hostile brokers and publishers, offline (messages fed through a fake session): oversized and
 * malformed payloads, a YAML bomb, random bytes, and a flood of config topics far beyond {@code
 * maxDevices}. Memory stays bounded (the table holds at most maxDevices), every property stays in
 * the {@code MQTT_} namespace and each distinct reason is logged once.
 */
class MaliciousMqttTest {

  private static final Pattern ENV = Pattern.compile("MQTT_[A-Z0-9_]+");

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(MqttDiscovery.class);

  @BeforeEach
  void captureLogs() {
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void stop() {
    logger.detachAppender(logs);
    scheduler.shutdownNow();
  }

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  private List<String> warnings() {
    return logs.list.stream()
        .filter(e -> e.getLevel().toString().equals("WARN"))
        .map(ILoggingEvent::getFormattedMessage)
        .toList();
  }

  @Test
  void hostileMessagesAreIgnoredWithOneWarningPerReason() throws Exception {
    FakeSessions sessions = new FakeSessions();
    RecordingListener listener = new RecordingListener();
    MqttDetails details =
        MqttDetails.parse("brokers: [tcp://b]\nmaxDevices: 100\nmaxPayloadBytes: 1024").orThrow();
    MqttDiscovery discovery = new MqttDiscovery("evil", details, listener, scheduler, sessions);
    discovery.start();
    FakeSessions.Fake s = sessions.awaitConnect(1);
    s.events().connected("tcp://b:1883");

    for (int i = 0; i < 3; i++) {
      s.events()
          .message("tcp://b:1883", "homeassistant/sensor/big" + i + "/config", new byte[2048]);
      s.events()
          .message("tcp://b:1883", "homeassistant/sensor/bad" + i + "/config", utf8("{\"a\": "));
      s.events()
          .message(
              "tcp://b:1883",
              "homeassistant/sensor/utf" + i + "/config",
              new byte[] {(byte) 0xff, 0x7b});
      s.events()
          .message("tcp://b:1883", "homeassistant/sensor/arr" + i + "/config", utf8("[1, 2]"));
      s.events().message("tcp://b:1883", "homeassistant/x\n/y/config", utf8("{}"));
    }
    // A YAML alias bomb inside the size limit.
    s.events()
        .message(
            "tcp://b:1883",
            "homeassistant/sensor/bomb/config",
            utf8(
                "{a: &a [x,x,x,x,x,x,x,x,x], b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a], c: [*b,*b,*b,*b,*b,*b,*b]}"));
    // Seeded random payloads.
    SplittableRandom random = new SplittableRandom(30);
    for (int i = 0; i < 2000; i++) {
      byte[] data = new byte[random.nextInt(1, 1024)];
      random.nextBytes(data);
      s.events().message("tcp://b:1883", "homeassistant/sensor/r" + i + "/config", data);
    }
    // A flood of valid config topics, 100 times the cap.
    for (int i = 0; i < 10_000; i++) {
      s.events()
          .message(
              "tcp://b:1883",
              "homeassistant/sensor/flood" + i + "/config",
              utf8("{\"unique_id\": \"f" + i + "\", \"name\": \"LD_PRELOAD=/x\"}"));
    }
    discovery.close();

    List<String> last = listener.lastIds();
    assertThat(last).hasSizeLessThanOrEqualTo(100);
    assertThat(listener.snapshots())
        .allSatisfy(snap -> assertThat(snap).hasSizeLessThanOrEqualTo(100));
    listener
        .last()
        .orElseThrow()
        .forEach(d -> assertThat(d.properties().keySet()).allMatch(k -> ENV.matcher(k).matches()));
    List<String> w = warnings();
    assertThat(w).hasSizeLessThanOrEqualTo(Announcement.Reason.values().length);
    assertThat(w)
        .anyMatch(m -> m.contains("payload larger than maxPayloadBytes"))
        .anyMatch(m -> m.contains("payload is not valid JSON"))
        .anyMatch(m -> m.contains("payload is not UTF-8"))
        .anyMatch(m -> m.contains("payload is not a JSON object"))
        .anyMatch(m -> m.contains("topic is not a Home Assistant discovery config topic"))
        .anyMatch(m -> m.contains("maxDevices reached"))
        .noneMatch(m -> m.contains("\n"));
    assertThat(Arrays.stream(Announcement.Reason.values()).map(r -> r.text))
        .allMatch(text -> w.stream().filter(m -> m.contains(text)).count() <= 1);
    System.out.println(
        "FAULT mqtt-hostile messages="
            + (15 + 1 + 2000 + 10_000)
            + " warnings="
            + w.size()
            + " tracked="
            + last.size());
  }
}
