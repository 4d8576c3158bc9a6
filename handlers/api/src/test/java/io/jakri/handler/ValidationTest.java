package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ValidationTest {

  @Test
  void okIsValidWithNothingToSay() {
    assertThat(Validation.ok().valid()).isTrue();
    assertThat(Validation.ok().errors()).isEmpty();
    assertThat(Validation.ok().warnings()).isEmpty();
  }

  @Test
  void anyErrorMakesItInvalidAndWarningsAloneDoNot() {
    assertThat(new Validation(List.of("bad"), List.of()).valid()).isFalse();
    assertThat(new Validation(List.of(), List.of("hmm")).valid()).isTrue();
  }

  @Test
  void itsListsAreCopies() {
    List<String> errors = new ArrayList<>(List.of("a"));
    Validation validation = new Validation(errors, List.of());
    errors.add("b");
    assertThat(validation.errors()).containsExactly("a");
  }

  @Test
  void problemsCollectEveryErrorAndKeepReading() {
    Problems problems = new Problems();
    Optional<Integer> bad =
        problems.read(
            () -> {
              throw new InvalidDetailsException("x must be an integer");
            });
    Optional<String> good = problems.read(() -> "fine");
    problems.warn("y is not a known field; ignored");
    assertThat(bad).isEmpty();
    assertThat(good).contains("fine");
    assertThat(problems.errors()).containsExactly("x must be an integer");
    assertThat(problems.warnings()).containsExactly("y is not a known field; ignored");
  }
}
