package io.jakri.handler;

import java.util.List;

/**
 * The outcome of checking a Configuration's details: errors make it invalid, warnings do not. Each
 * message names the field it is about.
 */
public record Validation(List<String> errors, List<String> warnings) {

  public Validation {
    errors = List.copyOf(errors);
    warnings = List.copyOf(warnings);
  }

  public static Validation ok() {
    return new Validation(List.of(), List.of());
  }

  public boolean valid() {
    return errors.isEmpty();
  }
}
