package io.jakri.handler.staticmapping;

import io.jakri.handler.InvalidDetailsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Collects every error and warning found while reading details, so one validation run reports all
 * of them instead of stopping at the first. Not thread-safe: one instance per parse.
 */
final class Problems {

  /** A getter of {@link io.jakri.handler.Details} that may reject the value. */
  @FunctionalInterface
  interface Read<T> {
    T get() throws InvalidDetailsException;
  }

  private final List<String> errors = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();

  void error(String message) {
    errors.add(message);
  }

  void warn(String message) {
    warnings.add(message);
  }

  /** The value, or empty after recording the getter's error. */
  <T> Optional<T> read(Read<T> read) {
    try {
      return Optional.of(read.get());
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
      return Optional.empty();
    }
  }

  /** As {@link #read} for getters that already answer an {@link Optional}. */
  <T> Optional<T> readOptional(Read<Optional<T>> read) {
    return read(read).flatMap(value -> value);
  }

  List<String> errors() {
    return List.copyOf(errors);
  }

  List<String> warnings() {
    return List.copyOf(warnings);
  }
}
