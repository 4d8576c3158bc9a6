package io.jakri.handler.mqtt;

import java.nio.ByteBuffer;
import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Turns one MQTT message into an {@link Announcement}. Payloads are hostile: size-checked before
 * decoding, strict UTF-8, read as strict JSON by {@link StrictJson} (bounded depth and lengths, no
 * duplicate keys), and every value through {@link Properties#value}. Pure and thread-safe.
 */
final class AnnouncementReader {

  private static final int MAX_ID_CHARS = 256;

  private final Mode mode;
  private final int maxPayloadBytes;
  private final Pattern haTopic;
  private final StrictJson json;

  AnnouncementReader(Mode mode, int maxPayloadBytes) {
    this.mode = mode;
    this.maxPayloadBytes = maxPayloadBytes;
    this.json = new StrictJson(maxPayloadBytes);
    this.haTopic =
        mode instanceof Mode.HomeAssistant ha
            ? Pattern.compile(
                Pattern.quote(ha.prefix())
                    + "/([A-Za-z0-9_-]{1,64})/(?:([A-Za-z0-9_-]{1,128})/)?([A-Za-z0-9_-]{1,128})/config")
            : null;
  }

  /** Reads a message that arrived on {@code topic} from {@code broker}. */
  Announcement read(String topic, byte[] payload, String broker) {
    Matcher ha = null;
    if (haTopic != null) {
      ha = haTopic.matcher(topic);
      if (!ha.matches()) {
        return new Announcement.Rejected(topic, Announcement.Reason.UNEXPECTED_TOPIC);
      }
    }
    if (payload.length == 0) {
      return new Announcement.Removed(topic);
    }
    if (payload.length > maxPayloadBytes) {
      return new Announcement.Rejected(topic, Announcement.Reason.OVERSIZED);
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(ByteBuffer.wrap(payload))
              .toString();
    } catch (CharacterCodingException e) {
      return new Announcement.Rejected(topic, Announcement.Reason.NOT_UTF8);
    }
    if (text.isBlank()) {
      return new Announcement.Removed(topic);
    }
    Object document;
    try {
      document = json.read(text);
    } catch (StrictJson.Malformed e) {
      return new Announcement.Rejected(topic, Announcement.Reason.MALFORMED);
    }
    if (!(document instanceof Map<?, ?> object)) {
      return new Announcement.Rejected(topic, Announcement.Reason.NOT_AN_OBJECT);
    }
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put(Properties.BROKER, broker);
    properties.put(Properties.TOPIC, topic);
    if (mode instanceof Mode.Generic generic) {
      return generic(topic, generic, object, properties);
    }
    return homeAssistant(topic, ha, object, properties);
  }

  private static Announcement homeAssistant(
      String topic, Matcher ha, Map<?, ?> json, Map<String, String> properties) {
    String component = ha.group(1);
    properties.put(Properties.COMPONENT, component);
    if (ha.group(2) != null) {
      properties.put(Properties.NODE_ID, ha.group(2));
    }
    properties.put(Properties.OBJECT_ID, ha.group(3));
    Optional<String> base = field(json, "~");
    put(properties, Properties.NAME, field(json, "name"));
    put(
        properties,
        Properties.STATE_TOPIC,
        field(json, "state_topic", "stat_t").map(t -> expand(t, base)));
    put(
        properties,
        Properties.COMMAND_TOPIC,
        field(json, "command_topic", "cmd_t").map(t -> expand(t, base)));
    Object device = json.containsKey("device") ? json.get("device") : json.get("dev");
    if (device instanceof Map<?, ?> dev) {
      put(properties, Properties.DEVICE_NAME, field(dev, "name"));
      put(properties, Properties.MANUFACTURER, field(dev, "manufacturer", "mf"));
      put(properties, Properties.MODEL, field(dev, "model", "mdl"));
      put(properties, Properties.SW_VERSION, field(dev, "sw_version", "sw"));
    }
    String id =
        field(json, "unique_id", "uniq_id").filter(AnnouncementReader::usableId).orElse(topic);
    return new Announcement.Present(topic, id, component, properties);
  }

  private static Announcement generic(
      String topic, Mode.Generic mode, Map<?, ?> json, Map<String, String> properties) {
    for (Map.Entry<String, JsonPointer> e : mode.properties().entrySet()) {
      put(properties, e.getKey(), e.getValue().evaluate(json).flatMap(Properties::value));
    }
    String id =
        mode.id()
            .flatMap(p -> p.evaluate(json))
            .flatMap(Properties::value)
            .filter(AnnouncementReader::usableId)
            .orElse(topic);
    return new Announcement.Present(topic, id, "", properties);
  }

  /** The first of {@code names} present in {@code json} as a usable value. */
  private static Optional<String> field(Map<?, ?> json, String... names) {
    for (String name : names) {
      Object raw = json.get(name);
      if (raw != null) {
        return Properties.value(raw);
      }
    }
    return Optional.empty();
  }

  /** Home Assistant's {@code ~}: a topic starting or ending with it gets the base topic there. */
  private static String expand(String topic, Optional<String> base) {
    if (base.isEmpty()) {
      return topic;
    }
    if (topic.startsWith("~")) {
      return base.get() + topic.substring(1);
    }
    if (topic.endsWith("~")) {
      return topic.substring(0, topic.length() - 1) + base.get();
    }
    return topic;
  }

  private static boolean usableId(String id) {
    return !id.isBlank() && id.length() <= MAX_ID_CHARS;
  }

  private static void put(Map<String, String> properties, String name, Optional<String> value) {
    value.ifPresent(v -> properties.put(name, v));
  }
}
