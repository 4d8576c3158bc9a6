package io.jakri.handler.mqtt;

import com.fasterxml.jackson.core.JsonFactory;
import com.fasterxml.jackson.core.JsonParser;
import com.fasterxml.jackson.core.JsonToken;
import com.fasterxml.jackson.core.StreamReadConstraints;
import com.fasterxml.jackson.core.StreamReadFeature;
import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Reads one announcement payload as strict JSON (RFC 8259) with jackson-core's streaming parser:
 * objects become maps, arrays lists, and strings, numbers, booleans and null stay what they are.
 * Refused: anything that is not one JSON value (YAML, comments, single quotes, unquoted keys,
 * trailing text), a duplicate key, nesting deeper than {@value #MAX_DEPTH}, a string over the
 * payload limit or a number over {@value #MAX_NUMBER_CHARS} digits. Thread-safe.
 */
final class StrictJson {

  static final int MAX_DEPTH = 20;
  static final int MAX_NUMBER_CHARS = 64;

  private final JsonFactory factory;

  StrictJson(int maxPayloadBytes) {
    this.factory =
        JsonFactory.builder()
            .enable(StreamReadFeature.STRICT_DUPLICATE_DETECTION)
            .streamReadConstraints(
                StreamReadConstraints.builder()
                    .maxNestingDepth(MAX_DEPTH)
                    .maxStringLength(Math.max(1, maxPayloadBytes))
                    .maxNumberLength(MAX_NUMBER_CHARS)
                    .maxNameLength(Math.max(1, maxPayloadBytes))
                    .build())
            .build();
  }

  /**
   * The value of {@code payload} (already decoded as strict UTF-8); {@link Malformed} when it is
   * not exactly one JSON value.
   */
  Object read(String payload) throws Malformed {
    try (JsonParser parser = factory.createParser(payload)) {
      JsonToken first = parser.nextToken();
      if (first == null) {
        throw new Malformed("no JSON value");
      }
      Object value = value(parser, first);
      if (parser.nextToken() != null) {
        throw new Malformed("text after the JSON value");
      }
      return value;
    } catch (IOException | RuntimeException e) {
      throw new Malformed(e.getMessage());
    }
  }

  private static Object value(JsonParser parser, JsonToken token) throws IOException {
    switch (token) {
      case START_OBJECT -> {
        Map<String, Object> map = new LinkedHashMap<>();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_OBJECT; t = parser.nextToken()) {
          String name = parser.currentName();
          map.put(name, value(parser, parser.nextToken()));
        }
        return map;
      }
      case START_ARRAY -> {
        List<Object> list = new ArrayList<>();
        for (JsonToken t = parser.nextToken(); t != JsonToken.END_ARRAY; t = parser.nextToken()) {
          list.add(value(parser, t));
        }
        return list;
      }
      case VALUE_STRING -> {
        return parser.getText();
      }
      case VALUE_NUMBER_INT, VALUE_NUMBER_FLOAT -> {
        return parser.getNumberValue();
      }
      case VALUE_TRUE -> {
        return Boolean.TRUE;
      }
      case VALUE_FALSE -> {
        return Boolean.FALSE;
      }
      case VALUE_NULL -> {
        return null;
      }
      default -> throw new IOException("unexpected " + token);
    }
  }

  /** A payload that is not one strict JSON value. */
  static final class Malformed extends Exception {
    Malformed(String message) {
      super(message);
    }
  }
}
