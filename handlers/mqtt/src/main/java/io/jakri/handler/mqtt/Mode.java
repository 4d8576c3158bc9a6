package io.jakri.handler.mqtt;

import java.util.List;
import java.util.Map;
import java.util.Optional;

/** How announcements are found and read: Home Assistant discovery, or a generic topic filter. */
sealed interface Mode {

  /** The MQTT topic filters this mode subscribes to. */
  List<String> subscriptions();

  /**
   * Home Assistant MQTT discovery: retained {@code
   * <prefix>/<component>/[<node_id>/]<object_id>/config}.
   *
   * @param prefix the discovery prefix, default {@code homeassistant}
   */
  record HomeAssistant(String prefix) implements Mode {
    @Override
    public List<String> subscriptions() {
      return List.of(prefix + "/+/+/config", prefix + "/+/+/+/config");
    }
  }

  /**
   * Any topic carrying a JSON object per device.
   *
   * @param topics topic filters to subscribe to
   * @param id where the device id is in the payload; empty: the topic is the id
   * @param properties property name ({@code MQTT_*}) to JSON pointer
   */
  record Generic(List<String> topics, Optional<JsonPointer> id, Map<String, JsonPointer> properties)
      implements Mode {
    public Generic {
      topics = List.copyOf(topics);
      properties = Map.copyOf(properties);
    }

    @Override
    public List<String> subscriptions() {
      return topics;
    }
  }
}
