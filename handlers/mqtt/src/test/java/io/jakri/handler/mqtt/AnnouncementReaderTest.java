package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class AnnouncementReaderTest {

  private static final String BROKER = "tcp://b:1883";
  private final AnnouncementReader ha =
      new AnnouncementReader(new Mode.HomeAssistant("homeassistant"), 4096);

  private static byte[] utf8(String s) {
    return s.getBytes(StandardCharsets.UTF_8);
  }

  @Test
  void homeAssistantConfigWithNodeId() {
    Announcement a =
        ha.read(
            "homeassistant/binary_sensor/garden/motion/config",
            utf8(
                "{\"name\": \"Motion\", \"unique_id\": \"m-1\", \"state_topic\": \"garden/motion\","
                    + " \"device\": {\"name\": \"Garden\", \"manufacturer\": \"Acme\", \"model\":"
                    + " \"PIR\", \"sw_version\": 3}}"),
            BROKER);

    assertThat(a)
        .isEqualTo(
            new Announcement.Present(
                "homeassistant/binary_sensor/garden/motion/config",
                "m-1",
                "binary_sensor",
                Map.ofEntries(
                    Map.entry("MQTT_BROKER", BROKER),
                    Map.entry("MQTT_TOPIC", "homeassistant/binary_sensor/garden/motion/config"),
                    Map.entry("MQTT_COMPONENT", "binary_sensor"),
                    Map.entry("MQTT_NODE_ID", "garden"),
                    Map.entry("MQTT_OBJECT_ID", "motion"),
                    Map.entry("MQTT_NAME", "Motion"),
                    Map.entry("MQTT_STATE_TOPIC", "garden/motion"),
                    Map.entry("MQTT_DEVICE_NAME", "Garden"),
                    Map.entry("MQTT_MANUFACTURER", "Acme"),
                    Map.entry("MQTT_MODEL", "PIR"),
                    Map.entry("MQTT_SW_VERSION", "3"))));
  }

  @Test
  void withoutUniqueIdTheTopicIsTheId() {
    Announcement a =
        ha.read(
            "homeassistant/light/lamp/config",
            utf8("{\"cmd_t\": \"~/set\", \"~\": \"lamp\"}"),
            BROKER);

    assertThat(a).isInstanceOf(Announcement.Present.class);
    Announcement.Present p = (Announcement.Present) a;
    assertThat(p.id()).isEqualTo("homeassistant/light/lamp/config");
    assertThat(p.properties())
        .containsEntry("MQTT_COMMAND_TOPIC", "lamp/set")
        .doesNotContainKey("MQTT_NODE_ID");
  }

  @Test
  void emptyPayloadRemoves() {
    assertThat(ha.read("homeassistant/light/lamp/config", new byte[0], BROKER))
        .isEqualTo(new Announcement.Removed("homeassistant/light/lamp/config"));
  }

  @Test
  void topicsThatAreNotConfigTopicsAreRejected() {
    for (String topic :
        List.of(
            "homeassistant/light/lamp/state",
            "homeassistant/light/a/b/c/config",
            "homeassistant/li ght/lamp/config",
            "other/light/lamp/config")) {
      assertThat(ha.read(topic, utf8("{}"), BROKER))
          .as(topic)
          .isEqualTo(new Announcement.Rejected(topic, Announcement.Reason.UNEXPECTED_TOPIC));
    }
  }

  @Test
  void genericModeUsesThePointers() {
    AnnouncementReader generic =
        new AnnouncementReader(
            new Mode.Generic(
                List.of("d/+"),
                JsonPointer.parse("/ids/0"),
                Map.of(
                    "MQTT_FW",
                    JsonPointer.parse("/fw").get(),
                    "MQTT_GONE",
                    JsonPointer.parse("/nothing").get())),
            4096);

    Announcement.Present p =
        (Announcement.Present) generic.read("d/1", utf8("{\"ids\": [\"A\"], \"fw\": 1.5}"), BROKER);

    assertThat(p.id()).isEqualTo("A");
    assertThat(p.component()).isEmpty();
    assertThat(p.properties())
        .isEqualTo(Map.of("MQTT_BROKER", BROKER, "MQTT_TOPIC", "d/1", "MQTT_FW", "1.5"));
    assertThat(((Announcement.Present) generic.read("d/2", utf8("{\"ids\": {}}"), BROKER)).id())
        .isEqualTo("d/2");
  }

  @Test
  void valuesWithControlCharactersOrOverlongAreDropped() {
    Announcement.Present p =
        (Announcement.Present)
            ha.read(
                "homeassistant/sensor/x/config",
                utf8(
                    "{\"name\": \"a\\nLD_PRELOAD=/evil.so\", \"device\": {\"model\": \""
                        + "m".repeat(1025)
                        + "\", \"manufacturer\": {\"nested\": 1}}}"),
                BROKER);

    assertThat(p.properties()).doesNotContainKeys("MQTT_NAME", "MQTT_MODEL", "MQTT_MANUFACTURER");
    assertThat(Properties.value("ok")).isEqualTo(Optional.of("ok"));
  }

  @Test
  void payloadsThatAreYamlOrNotExactlyOneJsonValueAreMalformed() {
    AnnouncementReader reader =
        new AnnouncementReader(new Mode.HomeAssistant("homeassistant"), 4096);
    String topic = "homeassistant/sensor/t1/config";
    for (String payload :
        List.of(
            "{unique_id: t1}", // YAML flow mapping: unquoted key
            "unique_id: t1\nname: x", // YAML block mapping
            "{'unique_id': 't1'}", // single quotes
            "{\"unique_id\": \"t1\"} {}", // text after the value
            "{\"unique_id\": \"t1\", \"unique_id\": \"t2\"}", // duplicate key
            "{\"a\": 1 /* comment */}",
            "{\"a\": &x [1], \"b\": *x}", // YAML anchors
            "[".repeat(StrictJson.MAX_DEPTH + 1) + "]".repeat(StrictJson.MAX_DEPTH + 1),
            "{\"n\": " + "9".repeat(StrictJson.MAX_NUMBER_CHARS + 1) + "}")) {
      assertThat(reader.read(topic, payload.getBytes(StandardCharsets.UTF_8), "tcp://b:1883"))
          .as(payload)
          .isEqualTo(new Announcement.Rejected(topic, Announcement.Reason.MALFORMED));
    }
  }

  @Test
  void strictJsonKeepsNumbersBooleansAndNestedObjects() {
    AnnouncementReader reader =
        new AnnouncementReader(new Mode.HomeAssistant("homeassistant"), 4096);
    String topic = "homeassistant/sensor/t1/config";
    String payload =
        "{\"uniq_id\": 42, \"name\": \"T\\u00e9\", \"dev\": {\"mf\": \"Acme\", \"mdl\": 3.5,"
            + " \"sw\": true}, \"extra\": [null, {}]}";
    Announcement a = reader.read(topic, payload.getBytes(StandardCharsets.UTF_8), "tcp://b:1883");
    assertThat(a).isInstanceOf(Announcement.Present.class);
    Announcement.Present p = (Announcement.Present) a;
    assertThat(p.id()).isEqualTo("42");
    assertThat(p.properties())
        .containsEntry(Properties.NAME, "T\u00e9")
        .containsEntry(Properties.MANUFACTURER, "Acme")
        .containsEntry(Properties.MODEL, "3.5")
        .containsEntry(Properties.SW_VERSION, "true");
  }
}
