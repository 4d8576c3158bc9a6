package io.jakri.handler.mqtt;

import java.util.Map;

/** What one retained message on a discovery topic says. */
sealed interface Announcement {

  /** The topic it came on. */
  String topic();

  /**
   * A device is there.
   *
   * @param id the device id (unique_id, the id pointer's value, or the topic)
   * @param component the Home Assistant component, or "" in generic mode
   * @param properties its {@code MQTT_*} properties
   */
  record Present(String topic, String id, String component, Map<String, String> properties)
      implements Announcement {
    public Present {
      properties = Map.copyOf(properties);
    }
  }

  /** An empty retained payload: the device on this topic is gone. */
  record Removed(String topic) implements Announcement {}

  /** A message the handler cannot use; logged once per distinct reason. */
  record Rejected(String topic, Reason reason) implements Announcement {}

  /** Why a message was not used. */
  enum Reason {
    OVERSIZED("payload larger than maxPayloadBytes"),
    NOT_UTF8("payload is not UTF-8"),
    MALFORMED("payload is not valid JSON"),
    NOT_AN_OBJECT("payload is not a JSON object"),
    UNEXPECTED_TOPIC("topic is not a Home Assistant discovery config topic"),
    TOO_MANY_DEVICES("maxDevices reached");

    final String text;

    Reason(String text) {
      this.text = text;
    }
  }
}
