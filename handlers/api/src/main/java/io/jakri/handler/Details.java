package io.jakri.handler;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * Typed, field-named access to a parsed YAML mapping, for handlers reading their details.
 *
 * <p>Every getter records the key as known; {@link #unknownKeys()} then lists what the handler
 * never asked for, so it can warn about typos. Type errors throw {@link InvalidDetailsException}
 * with the full field path. Not thread-safe: use one instance per parse.
 */
public final class Details {

  private final String path;
  private final Map<String, Object> values;
  private final Set<String> known = new LinkedHashSet<>();

  private Details(String path, Map<String, Object> values) {
    this.path = path;
    this.values = values;
  }

  /** Parses YAML text (see {@link SafeYaml}); empty text gives empty details. */
  public static Details parse(String yaml) throws InvalidDetailsException {
    return new Details("", SafeYaml.loadMap(yaml));
  }

  /** Wraps an already parsed mapping found at {@code path} (for nested objects). */
  public static Details of(String path, Map<String, Object> values) {
    return new Details(path, values);
  }

  public String field(String key) {
    return path.isEmpty() ? key : path + "." + key;
  }

  public boolean has(String key) {
    known.add(key);
    return values.containsKey(key) && values.get(key) != null;
  }

  public String requireString(String key) throws InvalidDetailsException {
    return optionalString(key)
        .orElseThrow(() -> new InvalidDetailsException(field(key) + " is required"));
  }

  /** A string; numbers and booleans are accepted and turned into their text. */
  public Optional<String> optionalString(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof String || value instanceof Number || value instanceof Boolean) {
      return Optional.of(String.valueOf(value));
    }
    throw wrongType(key, "a string", value);
  }

  public Optional<Integer> optionalInt(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof Integer i) {
      return Optional.of(i);
    }
    if (value instanceof Long l && l >= Integer.MIN_VALUE && l <= Integer.MAX_VALUE) {
      return Optional.of(l.intValue());
    }
    if (value instanceof String s) {
      try {
        return Optional.of(Integer.parseInt(s.strip()));
      } catch (NumberFormatException e) {
        throw wrongType(key, "an integer", value);
      }
    }
    throw wrongType(key, "an integer", value);
  }

  public Optional<Boolean> optionalBoolean(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    if (value == null) {
      return Optional.empty();
    }
    if (value instanceof Boolean b) {
      return Optional.of(b);
    }
    if (value instanceof String s && (s.equalsIgnoreCase("true") || s.equalsIgnoreCase("false"))) {
      return Optional.of(Boolean.parseBoolean(s));
    }
    throw wrongType(key, "true or false", value);
  }

  /** A mapping of strings to scalar values (turned into strings); empty when absent. */
  public Map<String, String> stringMap(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    if (value == null) {
      return Map.of();
    }
    if (!(value instanceof Map<?, ?> map)) {
      throw wrongType(key, "a mapping", value);
    }
    Map<String, String> result = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      Object v = e.getValue();
      if (!(e.getKey() instanceof String k)) {
        throw new InvalidDetailsException(field(key) + " has a key that is not a string");
      }
      if (v != null && !(v instanceof String || v instanceof Number || v instanceof Boolean)) {
        throw wrongType(key + "." + k, "a string", v);
      }
      result.put(k, v == null ? "" : String.valueOf(v));
    }
    return result;
  }

  /** A list of strings (scalars turned into strings); empty when absent. */
  public List<String> stringList(String key) throws InvalidDetailsException {
    List<Object> raw = list(key);
    List<String> result = new ArrayList<>(raw.size());
    for (int i = 0; i < raw.size(); i++) {
      Object v = raw.get(i);
      if (!(v instanceof String || v instanceof Number || v instanceof Boolean)) {
        throw wrongType(key + "[" + i + "]", "a string", v);
      }
      result.add(String.valueOf(v));
    }
    return result;
  }

  /** A list of mappings, each wrapped as nested details; empty when absent. */
  public List<Details> objectList(String key) throws InvalidDetailsException {
    List<Object> raw = list(key);
    List<Details> result = new ArrayList<>(raw.size());
    for (int i = 0; i < raw.size(); i++) {
      result.add(asDetails(key + "[" + i + "]", raw.get(i)));
    }
    return result;
  }

  /** A nested mapping; empty when absent. */
  public Optional<Details> object(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    return value == null ? Optional.empty() : Optional.of(asDetails(key, value));
  }

  /** Keys present in the mapping that no getter asked for, with their full paths. */
  public List<String> unknownKeys() {
    List<String> unknown = new ArrayList<>();
    for (String key : values.keySet()) {
      if (!known.contains(key)) {
        unknown.add(field(key));
      }
    }
    return unknown;
  }

  private List<Object> list(String key) throws InvalidDetailsException {
    known.add(key);
    Object value = values.get(key);
    if (value == null) {
      return List.of();
    }
    if (!(value instanceof List<?> list)) {
      throw wrongType(key, "a list", value);
    }
    return new ArrayList<>(list);
  }

  private Details asDetails(String key, Object value) throws InvalidDetailsException {
    if (!(value instanceof Map<?, ?> map)) {
      throw wrongType(key, "a mapping", value);
    }
    Map<String, Object> copy = new LinkedHashMap<>();
    for (Map.Entry<?, ?> e : map.entrySet()) {
      if (!(e.getKey() instanceof String k)) {
        throw new InvalidDetailsException(field(key) + " has a key that is not a string");
      }
      copy.put(k, e.getValue());
    }
    return new Details(field(key), copy);
  }

  private InvalidDetailsException wrongType(String key, String expected, Object value) {
    return new InvalidDetailsException(
        field(key) + " must be " + expected + " but is " + describe(value));
  }

  static String describe(Object value) {
    if (value == null) {
      return "empty";
    }
    if (value instanceof Map) {
      return "a mapping";
    }
    if (value instanceof List) {
      return "a list";
    }
    if (value instanceof String s) {
      return "the string \"" + (s.length() > 40 ? s.substring(0, 40) + "..." : s) + "\"";
    }
    return value.getClass().getSimpleName().toLowerCase(java.util.Locale.ROOT) + " " + value;
  }
}
