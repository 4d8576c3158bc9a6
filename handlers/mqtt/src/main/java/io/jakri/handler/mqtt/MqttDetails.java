package io.jakri.handler.mqtt;

import io.jakri.handler.Details;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Parsed;
import java.net.URI;
import java.net.URISyntaxException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The mqtt handler's discovery details, parsed and checked; every error names its field and, when
 * the details are YAML, its line and column.
 *
 * <pre>
 * brokers: [tcp://broker:1883]     # required: tcp:// or ssl:// URLs, tried in order (failover)
 * mode: homeassistant              # or generic
 * prefix: homeassistant            # homeassistant mode: the discovery prefix
 * components: [sensor]             # homeassistant mode: keep only these components
 * topics: [devices/+/announce]     # generic mode, required: topic filters
 * id: /serial                      # generic mode: JSON pointer to the id (default: the topic)
 * properties: {MQTT_FW: /fw}       # generic mode: MQTT_* property to JSON pointer
 * manufacturers: [Acme]            # keep only these (exact)
 * models: [X1]                     # keep only these (exact)
 * maxDevices: 1024                 # at most this many announcements tracked
 * maxPayloadBytes: 16384           # larger announcements are ignored
 * gracePeriod: 5m                  # keep devices this long after losing the broker
 * </pre>
 */
record MqttDetails(
    List<URI> brokers,
    Mode mode,
    Set<String> components,
    Set<String> manufacturers,
    Set<String> models,
    int maxDevices,
    int maxPayloadBytes,
    Duration gracePeriod) {

  static final String DEFAULT_PREFIX = "homeassistant";
  static final int DEFAULT_MAX_DEVICES = 1024;
  static final int DEFAULT_MAX_PAYLOAD_BYTES = 16 * 1024;
  static final int MAX_PAYLOAD_BYTES = 64 * 1024;
  static final Duration DEFAULT_GRACE = Duration.ofMinutes(5);

  private static final Pattern DURATION = Pattern.compile("([0-9]{1,6})(ms|s|m|h)");
  private static final Pattern PROPERTY = Pattern.compile("MQTT_[A-Z0-9_]{1,60}");
  private static final Pattern HOST = Pattern.compile("[A-Za-z0-9.:\\[\\]-]{1,253}");

  MqttDetails {
    brokers = List.copyOf(brokers);
    Objects.requireNonNull(mode, "mode");
    components = Set.copyOf(components);
    manufacturers = Set.copyOf(manufacturers);
    models = Set.copyOf(models);
    Objects.requireNonNull(gracePeriod, "gracePeriod");
  }

  /** Parses and checks details YAML; never throws, collects every problem. Pure. */
  static Parsed<MqttDetails> parse(String yaml) {
    YamlPositions at;
    try {
      at = YamlPositions.of(yaml);
    } catch (YamlPositions.SyntaxError e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), List.of());
    }
    Details d;
    try {
      d = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of("discoveryDetails: " + e.getMessage()), List.of());
    }
    List<String> errors = new ArrayList<>();
    List<String> warnings = new ArrayList<>();
    Problem problem = (path, message) -> errors.add(path + at.at(path) + ": " + message);

    List<URI> brokers = new ArrayList<>();
    List<String> rawBrokers = strings(d, "brokers", errors, at);
    if (rawBrokers.isEmpty() && !d.has("brokers")) {
      errors.add("brokers is required: one or more tcp:// or ssl:// URLs");
    } else if (rawBrokers.isEmpty() && errors.isEmpty()) {
      problem.add("brokers", "must name at least one broker");
    }
    for (int i = 0; i < rawBrokers.size(); i++) {
      String field = "brokers[" + i + "]";
      String raw = rawBrokers.get(i);
      brokerUri(raw)
          .ifPresentOrElse(
              brokers::add,
              () ->
                  problem.add(
                      field,
                      "must be tcp://host:port or ssl://host:port but is \""
                          + shorten(raw)
                          + "\""));
    }

    String modeName = string(d, "mode", errors, at).orElse("homeassistant");
    Set<String> components = new LinkedHashSet<>(strings(d, "components", errors, at));
    Mode mode = null;
    if (modeName.equals("homeassistant")) {
      String prefix = string(d, "prefix", errors, at).orElse(DEFAULT_PREFIX);
      if (prefix.isEmpty() || !topicLevelsPlain(prefix)) {
        problem.add("prefix", "must be a topic without wildcards such as homeassistant");
      }
      for (String key : List.of("topics", "id", "properties")) {
        if (d.has(key)) {
          problem.add(key, "is a generic mode setting; set mode: generic to use it");
        }
      }
      mode = new Mode.HomeAssistant(prefix);
    } else if (modeName.equals("generic")) {
      List<String> topics = strings(d, "topics", errors, at);
      if (topics.isEmpty() && !d.has("topics")) {
        errors.add("topics is required in generic mode: topic filters such as devices/+/info");
      }
      for (int i = 0; i < topics.size(); i++) {
        String error = topicFilterError(topics.get(i));
        if (error != null) {
          problem.add("topics[" + i + "]", error);
        }
      }
      Optional<JsonPointer> id = Optional.empty();
      Optional<String> rawId = string(d, "id", errors, at);
      if (rawId.isPresent()) {
        id = JsonPointer.parse(rawId.get());
        if (id.isEmpty() || rawId.get().isEmpty()) {
          problem.add("id", "must be a JSON pointer such as /serial");
          id = Optional.empty();
        }
      }
      Map<String, JsonPointer> properties = new LinkedHashMap<>();
      Map<String, String> rawProperties = Map.of();
      try {
        rawProperties = d.stringMap("properties");
      } catch (InvalidDetailsException e) {
        errors.add(e.getMessage() + at.at("properties"));
      }
      for (Map.Entry<String, String> e : rawProperties.entrySet()) {
        String field = "properties." + e.getKey();
        if (!PROPERTY.matcher(e.getKey()).matches()) {
          problem.add(field, "a property name is MQTT_ then upper-case letters, digits or _");
        } else if (Properties.FIXED.contains(e.getKey())) {
          problem.add(field, "is set by the handler itself");
        }
        Optional<JsonPointer> pointer = JsonPointer.parse(e.getValue());
        if (pointer.isEmpty() || e.getValue().isEmpty()) {
          problem.add(field, "must be a JSON pointer such as /firmware/version");
        } else {
          properties.put(e.getKey(), pointer.get());
        }
      }
      if (!components.isEmpty()) {
        problem.add("components", "is a homeassistant mode setting");
      }
      if (d.has("prefix")) {
        problem.add("prefix", "is a homeassistant mode setting");
      }
      mode = new Mode.Generic(topics, id, properties);
    } else {
      problem.add("mode", "must be homeassistant or generic but is \"" + shorten(modeName) + "\"");
    }

    Set<String> manufacturers = new LinkedHashSet<>(strings(d, "manufacturers", errors, at));
    Set<String> models = new LinkedHashSet<>(strings(d, "models", errors, at));

    int maxDevices = integer(d, "maxDevices", errors, at).orElse(DEFAULT_MAX_DEVICES);
    if (maxDevices < 1 || maxDevices > 100_000) {
      problem.add("maxDevices", "must be between 1 and 100000 but is " + maxDevices);
    }
    int maxPayload = integer(d, "maxPayloadBytes", errors, at).orElse(DEFAULT_MAX_PAYLOAD_BYTES);
    if (maxPayload < 64 || maxPayload > MAX_PAYLOAD_BYTES) {
      problem.add(
          "maxPayloadBytes",
          "must be between 64 and " + MAX_PAYLOAD_BYTES + " but is " + maxPayload);
    }
    Duration grace = DEFAULT_GRACE;
    Optional<String> rawGrace = string(d, "gracePeriod", errors, at);
    if (rawGrace.isPresent()) {
      Optional<Duration> parsed = duration(rawGrace.get());
      if (parsed.isEmpty()) {
        problem.add(
            "gracePeriod",
            "must be a duration such as 30s, 5m or 1h but is \"" + shorten(rawGrace.get()) + "\"");
      } else {
        grace = parsed.get();
      }
    }

    for (String unknown : d.unknownKeys()) {
      warnings.add(unknown + at.at(unknown) + ": not an mqtt setting, ignored");
    }
    if (!errors.isEmpty() || mode == null) {
      return Parsed.failed(errors, warnings);
    }
    return Parsed.of(
        new MqttDetails(
            brokers, mode, components, manufacturers, models, maxDevices, maxPayload, grace),
        warnings);
  }

  /** A broker URL Paho can use: tcp:// or ssl://, a host, a port (default 1883 / 8883). */
  static Optional<URI> brokerUri(String raw) {
    URI uri;
    try {
      uri = new URI(raw.strip());
    } catch (URISyntaxException e) {
      return Optional.empty();
    }
    String scheme = uri.getScheme();
    if (!"tcp".equals(scheme) && !"ssl".equals(scheme)) {
      return Optional.empty();
    }
    if (uri.getHost() == null
        || !HOST.matcher(uri.getHost()).matches()
        || uri.getUserInfo() != null
        || uri.getQuery() != null
        || uri.getFragment() != null
        || !(uri.getPath() == null || uri.getPath().isEmpty() || uri.getPath().equals("/"))) {
      return Optional.empty();
    }
    int port = uri.getPort() > 0 ? uri.getPort() : scheme.equals("ssl") ? 8883 : 1883;
    if (port > 65535) {
      return Optional.empty();
    }
    return Optional.of(URI.create(scheme + "://" + uri.getHost() + ":" + port));
  }

  /** Why a topic filter is not one (MQTT 3.1.1 §4.7), or null. */
  static String topicFilterError(String filter) {
    if (filter.isEmpty()) {
      return "must not be empty";
    }
    if (filter.getBytes(StandardCharsets.UTF_8).length > 1024) {
      return "must be at most 1024 bytes";
    }
    if (filter.indexOf('\0') >= 0) {
      return "must not contain NUL";
    }
    String[] levels = filter.split("/", -1);
    for (int i = 0; i < levels.length; i++) {
      String level = levels[i];
      if (level.contains("#") && (!level.equals("#") || i != levels.length - 1)) {
        return "\"#\" must be a whole level and the last one, but is \"" + shorten(filter) + "\"";
      }
      if (level.contains("+") && !level.equals("+")) {
        return "\"+\" must be a whole level, but is \"" + shorten(filter) + "\"";
      }
    }
    return null;
  }

  static Optional<Duration> duration(String raw) {
    Matcher m = DURATION.matcher(raw.strip());
    if (!m.matches()) {
      return Optional.empty();
    }
    long n = Long.parseLong(m.group(1));
    return Optional.of(
        switch (m.group(2)) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        });
  }

  private static boolean topicLevelsPlain(String topic) {
    return !topic.contains("+") && !topic.contains("#") && topic.indexOf('\0') < 0;
  }

  private interface Problem {
    void add(String path, String message);
  }

  private static List<String> strings(
      Details d, String key, List<String> errors, YamlPositions at) {
    try {
      return d.stringList(key);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage() + at.at(key));
      return List.of();
    }
  }

  private static Optional<String> string(
      Details d, String key, List<String> errors, YamlPositions at) {
    try {
      return d.optionalString(key);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage() + at.at(key));
      return Optional.empty();
    }
  }

  private static Optional<Integer> integer(
      Details d, String key, List<String> errors, YamlPositions at) {
    try {
      return d.optionalInt(key);
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage() + at.at(key));
      return Optional.empty();
    }
  }

  static String shorten(String s) {
    return s.length() > 40 ? s.substring(0, 40) + "..." : s;
  }
}
