package io.jakri.agent.configuration;

import java.util.List;
import java.util.Optional;

/**
 * The problems of one document, as {@link ConfigurationParser} reports them (each a message naming
 * the field); {@link #attempt} collects them so that one run reports every independent problem.
 */
final class Invalid extends Exception {
  private static final long serialVersionUID = 1L;

  private final List<String> problems;

  Invalid(String message) {
    super(message);
    this.problems = List.of(message);
  }

  Invalid(List<String> problems) {
    super(String.join("; ", problems));
    this.problems = List.copyOf(problems);
  }

  List<String> problems() {
    return problems;
  }

  /** One check that may fail with a problem; see {@link #attempt}. */
  interface Check<T> {
    T run() throws Invalid;
  }

  /** Runs {@code check}; its problems are added to {@code problems} and the result is empty. */
  static <T> Optional<T> attempt(List<String> problems, Check<T> check) {
    try {
      return Optional.of(check.run());
    } catch (Invalid e) {
      problems.addAll(e.problems());
      return Optional.empty();
    }
  }
}
