package io.jakri.handler;

import java.util.List;
import java.util.Optional;

/**
 * The outcome of reading a Configuration's details into a handler's own type {@code T}: the details
 * when there are no errors, and every error and warning found, each naming its field. A handler's
 * {@code validate} answers {@link #validation()}; its {@code start} takes {@link #orThrow()}.
 * Immutable.
 *
 * @param details the typed details; empty when there are errors
 * @param errors what makes the details unusable
 * @param warnings what is odd but usable
 */
public record Parsed<T>(Optional<T> details, List<String> errors, List<String> warnings) {

  public Parsed {
    details = details == null ? Optional.empty() : details;
    errors = List.copyOf(errors);
    warnings = List.copyOf(warnings);
  }

  /** Details without errors, with any {@code warnings}. */
  public static <T> Parsed<T> of(T details, List<String> warnings) {
    return new Parsed<>(Optional.of(details), List.of(), warnings);
  }

  /** No details: the {@code errors} (and {@code warnings}) say why. */
  public static <T> Parsed<T> failed(List<String> errors, List<String> warnings) {
    return new Parsed<>(Optional.empty(), errors, warnings);
  }

  /** The details, or an exception whose message lists every error. */
  public T orThrow() throws InvalidDetailsException {
    if (details.isEmpty()) {
      throw new InvalidDetailsException(String.join("; ", errors));
    }
    return details.get();
  }

  /** The errors and warnings, as a handler's {@code validate} answers them. */
  public Validation validation() {
    return new Validation(errors, warnings);
  }
}
