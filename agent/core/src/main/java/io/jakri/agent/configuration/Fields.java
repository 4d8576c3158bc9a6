package io.jakri.agent.configuration;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * Typed reads of a parsed YAML document's values (maps, lists, scalars), for {@link
 * ConfigurationParser}: a value of the wrong shape is an {@link Invalid} naming the field.
 */
final class Fields {

  private Fields() {}

  /** {@code value} as a mapping with string keys; required. */
  static Map<String, Object> map(Object value, String field) throws Invalid {
    if (value == null) {
      throw new Invalid(field + " is required");
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw new Invalid(field + " must be a mapping");
    }
    Map<String, Object> result = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String key)) {
        throw new Invalid(field + " has a key that is not a string: " + e.getKey());
      }
      result.put(key, e.getValue());
    }
    return result;
  }

  /** {@code value} as a string (numbers and booleans as written); empty when absent. */
  static Optional<String> string(Object value, String field) throws Invalid {
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof String || value instanceof Number || value instanceof Boolean) {
      return Optional.of(String.valueOf(value));
    }
    throw new Invalid(field + " must be a string");
  }

  /**
   * For a number or boolean where a string is wanted: {@code (quote it: "8080")}; else empty. YAML
   * reads {@code 8080} and {@code true} as such, while the Kubernetes API wants them quoted.
   */
  static String quoteHint(Object value) {
    return value instanceof Number || value instanceof Boolean
        ? " (quote it: \"" + value + "\")"
        : "";
  }

  /** The first line of an exception's message, for one-line problems. */
  static String firstLine(String message) {
    if (message == null) {
      return "unreadable document";
    }
    String trimmed = message.strip();
    int newline = trimmed.indexOf('\n');
    return newline < 0 ? trimmed : trimmed.substring(0, newline);
  }
}
