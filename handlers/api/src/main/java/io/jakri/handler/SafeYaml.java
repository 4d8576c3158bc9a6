package io.jakri.handler;

import java.util.Map;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;
import org.yaml.snakeyaml.error.YAMLException;

/**
 * Parses untrusted YAML (discovery details, Configuration files) with hard limits: no global tags,
 * at most 10 aliases, no recursive keys, nesting depth 20, 64 KiB of text, no duplicate keys, one
 * document. Each call builds its own parser (SnakeYAML parsers are not thread-safe).
 */
public final class SafeYaml {

  /** Largest document accepted, in code points. */
  public static final int MAX_CODE_POINTS = 64 * 1024;

  private SafeYaml() {}

  /** Parses one YAML document; an empty text gives an empty map. */
  public static Object load(String text) throws InvalidDetailsException {
    if (text == null || text.isBlank()) {
      return Map.of();
    }
    if (text.codePointCount(0, text.length()) > MAX_CODE_POINTS) {
      throw new InvalidDetailsException(
          "YAML document is larger than " + MAX_CODE_POINTS + " characters");
    }
    try {
      Object value = yaml().load(text);
      if (recursive(value)) {
        // Legal YAML, but a handler walking it (equals, hashCode, toString) would never stop.
        throw new InvalidDetailsException("invalid YAML: an alias refers to its own parent");
      }
      return value == null ? Map.of() : value;
    } catch (YAMLException | IllegalStateException e) {
      throw new InvalidDetailsException("invalid YAML: " + firstLine(e.getMessage()), e);
    } catch (RuntimeException e) {
      // SnakeYAML lets a few exceptions of explicitly tagged scalars through unwrapped
      // (NumberFormatException for "!!float y", IllegalArgumentException for bad "!!binary").
      throw new InvalidDetailsException("invalid YAML: a tagged value cannot be read: " + e, e);
    } catch (StackOverflowError e) {
      throw new InvalidDetailsException("invalid YAML: nested too deeply");
    }
  }

  /** Parses one YAML document that must be a mapping. */
  public static Map<String, Object> loadMap(String text) throws InvalidDetailsException {
    Object value = load(text);
    if (!(value instanceof Map<?, ?> map)) {
      throw new InvalidDetailsException(
          "expected a YAML mapping but found " + Details.describe(value));
    }
    for (Object key : map.keySet()) {
      if (!(key instanceof String)) {
        throw new InvalidDetailsException("mapping key " + key + " is not a string");
      }
    }
    @SuppressWarnings("unchecked")
    Map<String, Object> result = (Map<String, Object>) map;
    return result;
  }

  private static Yaml yaml() {
    return parser(MAX_CODE_POINTS, 20);
  }

  /**
   * A new parser with this class's limits (safe constructor, no global tags, at most 10 aliases, no
   * recursive or duplicate keys) but its own size and nesting bounds, for callers that read larger
   * documents such as multi-document Configuration files.
   */
  public static Yaml parser(int maxCodePoints, int maxNestingDepth) {
    LoaderOptions options = new LoaderOptions();
    options.setMaxAliasesForCollections(10);
    options.setAllowRecursiveKeys(false);
    options.setNestingDepthLimit(maxNestingDepth);
    options.setCodePointLimit(maxCodePoints);
    options.setAllowDuplicateKeys(false);
    return new Yaml(new SafeConstructor(options));
  }

  /**
   * Whether {@code value} contains itself (an alias to an enclosing collection), which would make
   * hashing, printing or dumping it loop forever. For callers that parse with {@link #parser}.
   */
  public static boolean recursive(Object value) {
    return recursive(
        value,
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()),
        java.util.Collections.newSetFromMap(new java.util.IdentityHashMap<>()));
  }

  private static boolean recursive(
      Object value, java.util.Set<Object> onPath, java.util.Set<Object> done) {
    if (!(value instanceof java.util.Map<?, ?>) && !(value instanceof java.util.Collection<?>)) {
      return false;
    }
    if (onPath.contains(value)) {
      return true;
    }
    if (!done.add(value)) {
      return false;
    }
    onPath.add(value);
    Iterable<?> children =
        value instanceof java.util.Map<?, ?> m
            ? java.util.stream.Stream.concat(m.keySet().stream(), m.values().stream()).toList()
            : (java.util.Collection<?>) value;
    for (Object child : children) {
      if (recursive(child, onPath, done)) {
        return true;
      }
    }
    onPath.remove(value);
    return false;
  }

  private static String firstLine(String message) {
    if (message == null) {
      return "unreadable document";
    }
    String trimmed = message.strip();
    int newline = trimmed.indexOf('\n');
    return newline < 0 ? trimmed : trimmed.substring(0, newline);
  }
}
