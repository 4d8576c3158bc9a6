package io.jakri.handler.mqtt;

import java.util.Optional;
import java.util.Set;

/** The property names the handler sets, and how a hostile value becomes a safe one. */
final class Properties {

  static final String BROKER = "MQTT_BROKER";
  static final String TOPIC = "MQTT_TOPIC";
  static final String COMPONENT = "MQTT_COMPONENT";
  static final String NODE_ID = "MQTT_NODE_ID";
  static final String OBJECT_ID = "MQTT_OBJECT_ID";
  static final String NAME = "MQTT_NAME";
  static final String DEVICE_NAME = "MQTT_DEVICE_NAME";
  static final String MANUFACTURER = "MQTT_MANUFACTURER";
  static final String MODEL = "MQTT_MODEL";
  static final String SW_VERSION = "MQTT_SW_VERSION";
  static final String STATE_TOPIC = "MQTT_STATE_TOPIC";
  static final String COMMAND_TOPIC = "MQTT_COMMAND_TOPIC";

  /** Names generic mode's {@code properties} may not take: the handler sets them. */
  static final Set<String> FIXED = Set.of(BROKER, TOPIC);

  /** Longest value kept; longer ones are dropped, not cut. */
  static final int MAX_VALUE_CHARS = 1024;

  private Properties() {}

  /**
   * A payload value as a property value: strings, numbers and booleans; empty for anything else,
   * for values over {@link #MAX_VALUE_CHARS} and for values with control characters.
   */
  static Optional<String> value(Object raw) {
    String text;
    if (raw instanceof String s) {
      text = s;
    } else if (raw instanceof Number || raw instanceof Boolean) {
      text = raw.toString();
    } else {
      return Optional.empty();
    }
    if (text.length() > MAX_VALUE_CHARS || text.chars().anyMatch(Character::isISOControl)) {
      return Optional.empty();
    }
    return Optional.of(text);
  }
}
