package io.jakri.handler.mqtt;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * An RFC 6901 JSON pointer ({@code /device/serial}, {@code ~0} for {@code ~}, {@code ~1} for {@code
 * /}), evaluated on the maps and lists a JSON document parses into.
 *
 * @param text the pointer as written
 * @param tokens its reference tokens, unescaped
 */
record JsonPointer(String text, List<String> tokens) {

  JsonPointer {
    tokens = List.copyOf(tokens);
  }

  /** Parses a pointer; empty if it is not one (it must be empty or start with {@code /}). */
  static Optional<JsonPointer> parse(String text) {
    if (text.isEmpty()) {
      return Optional.of(new JsonPointer(text, List.of()));
    }
    if (!text.startsWith("/")) {
      return Optional.empty();
    }
    List<String> tokens = new ArrayList<>();
    for (String raw : text.substring(1).split("/", -1)) {
      if (raw.matches(".*~([^01]|$).*")) {
        return Optional.empty();
      }
      tokens.add(raw.replace("~1", "/").replace("~0", "~"));
    }
    return Optional.of(new JsonPointer(text, tokens));
  }

  /** The value this pointer refers to in {@code document}, if there is one. */
  Optional<Object> evaluate(Object document) {
    Object current = document;
    for (String token : tokens) {
      if (current instanceof Map<?, ?> map) {
        current = map.get(token);
      } else if (current instanceof List<?> list && token.matches("0|[1-9][0-9]{0,8}")) {
        int index = Integer.parseInt(token);
        current = index < list.size() ? list.get(index) : null;
      } else {
        return Optional.empty();
      }
      if (current == null) {
        return Optional.empty();
      }
    }
    return Optional.of(current);
  }
}
