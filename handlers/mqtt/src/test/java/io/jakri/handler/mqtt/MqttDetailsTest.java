package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.Parsed;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class MqttDetailsTest {

  @Test
  void homeAssistantDefaults() throws Exception {
    MqttDetails d =
        MqttDetails.parse("brokers: [tcp://broker, ssl://secure.example:8884]").orThrow();

    assertThat(d.brokers())
        .containsExactly(URI.create("tcp://broker:1883"), URI.create("ssl://secure.example:8884"));
    assertThat(d.mode()).isEqualTo(new Mode.HomeAssistant("homeassistant"));
    assertThat(d.mode().subscriptions())
        .containsExactly("homeassistant/+/+/config", "homeassistant/+/+/+/config");
    assertThat(d.maxDevices()).isEqualTo(1024);
    assertThat(d.maxPayloadBytes()).isEqualTo(16384);
    assertThat(d.gracePeriod()).isEqualTo(Duration.ofMinutes(5));
  }

  @Test
  void genericModeWithPointersAndFilters() throws Exception {
    MqttDetails d =
        MqttDetails.parse(
                """
                brokers: [tcp://10.0.0.5:1884]
                mode: generic
                topics: [devices/+/info, plant/#]
                id: /serial
                properties: {MQTT_FIRMWARE: /fw/version}
                manufacturers: [Acme]
                models: [X1]
                maxDevices: 10
                maxPayloadBytes: 1024
                gracePeriod: 30s
                """)
            .orThrow();

    Mode.Generic g = (Mode.Generic) d.mode();
    assertThat(g.topics()).containsExactly("devices/+/info", "plant/#");
    assertThat(g.id()).map(JsonPointer::text).contains("/serial");
    assertThat(g.properties()).containsOnlyKeys("MQTT_FIRMWARE");
    assertThat(d.manufacturers()).containsExactly("Acme");
    assertThat(d.models()).containsExactly("X1");
    assertThat(d.maxDevices()).isEqualTo(10);
    assertThat(d.gracePeriod()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void everyErrorNamesItsLineAndColumn() {
    Parsed<MqttDetails> parsed =
        MqttDetails.parse(
            """
            brokers:
              - tcp://ok:1883
              - http://nope
            maxDevices: 0
            gracePeriod: soon
            mode: generic
            topics: ["a/#/b", "x+/y"]
            properties: {PATH: /p, MQTT_BROKER: /b, MQTT_OK: nopointer}
            """);

    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors())
        .containsExactlyInAnyOrder(
            "brokers[1] (line 3, column 5): must be tcp://host:port or ssl://host:port but is"
                + " \"http://nope\"",
            "maxDevices (line 4, column 1): must be between 1 and 100000 but is 0",
            "gracePeriod (line 5, column 1): must be a duration such as 30s, 5m or 1h but is"
                + " \"soon\"",
            "topics[0] (line 7, column 10): \"#\" must be a whole level and the last one, but is"
                + " \"a/#/b\"",
            "topics[1] (line 7, column 19): \"+\" must be a whole level, but is \"x+/y\"",
            "properties.PATH (line 8, column 14): a property name is MQTT_ then upper-case"
                + " letters, digits or _",
            "properties.MQTT_BROKER (line 8, column 24): is set by the handler itself",
            "properties.MQTT_OK (line 8, column 41): must be a JSON pointer such as"
                + " /firmware/version");
  }

  @Test
  void syntaxErrorsCarryTheirPosition() {
    Parsed<MqttDetails> parsed = MqttDetails.parse("brokers: [tcp://a\nmode: x: y");

    assertThat(parsed.errors())
        .singleElement()
        .asString()
        .startsWith("discoveryDetails: invalid YAML (line ")
        .contains("column");
  }

  @Test
  void missingBrokersAndGenericTopicsAreRequired() {
    assertThat(MqttDetails.parse("mode: generic").errors())
        .containsExactlyInAnyOrder(
            "brokers is required: one or more tcp:// or ssl:// URLs",
            "topics is required in generic mode: topic filters such as devices/+/info");
  }

  @Test
  void settingsOfTheOtherModeAreErrorsAndUnknownKeysWarnings() {
    Parsed<MqttDetails> parsed =
        MqttDetails.parse("brokers: [tcp://a]\ntopics: [x]\nprefixx: ha\n");

    assertThat(parsed.errors())
        .containsExactly(
            "topics (line 2, column 1): is a generic mode setting; set mode: generic to use it");
    assertThat(parsed.warnings())
        .containsExactly("prefixx (line 3, column 1): not an mqtt setting, ignored");
  }

  @Test
  void brokerUrls() {
    assertThat(MqttDetails.brokerUri("ssl://h")).contains(URI.create("ssl://h:8883"));
    assertThat(MqttDetails.brokerUri("tcp://[::1]:1")).contains(URI.create("tcp://[::1]:1"));
    for (String bad :
        List.of("ws://h", "tcp://user:pw@h", "tcp://h/path", "tcp://h?x=1", "h:1883", "tcp://")) {
      assertThat(MqttDetails.brokerUri(bad)).as(bad).isEqualTo(Optional.empty());
    }
  }

  @Test
  void jsonPointers() throws Exception {
    Object doc = io.jakri.handler.SafeYaml.load("{\"a\": {\"b/c\": [1, {\"~d\": \"x\"}]}}");
    assertThat(JsonPointer.parse("/a/b~1c/1/~0d").flatMap(p -> p.evaluate(doc))).contains("x");
    assertThat(JsonPointer.parse("/a/b~1c/7").flatMap(p -> p.evaluate(doc))).isEmpty();
    assertThat(JsonPointer.parse("a")).isEmpty();
    assertThat(JsonPointer.parse("/~2")).isEmpty();
  }
}
