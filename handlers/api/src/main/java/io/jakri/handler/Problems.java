package io.jakri.handler;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;

/**
 * Collects every error and warning found while reading details, so one validation run reports all
 * of them instead of stopping at the first. Not thread-safe: one instance per parse.
 */
public final class Problems {

  /** A getter of {@link io.jakri.handler.Details} that may reject the value. */
  @FunctionalInterface
  public interface Read<T> {
    T get() throws InvalidDetailsException;
  }

  private final List<String> errors = new ArrayList<>();
  private final List<String> warnings = new ArrayList<>();

  public void error(String message) {
    errors.add(message);
  }

  public void warn(String message) {
    warnings.add(message);
  }

  /** The value, or empty after recording the getter's error. */
  public <T> Optional<T> read(Read<T> read) {
    try {
      return Optional.of(read.get());
    } catch (InvalidDetailsException e) {
      errors.add(e.getMessage());
      return Optional.empty();
    }
  }

  /** As {@link #read} for getters that already answer an {@link Optional}. */
  public <T> Optional<T> readOptional(Read<Optional<T>> read) {
    return read(read).flatMap(value -> value);
  }

  public List<String> errors() {
    return List.copyOf(errors);
  }

  public List<String> warnings() {
    return List.copyOf(warnings);
  }
}
