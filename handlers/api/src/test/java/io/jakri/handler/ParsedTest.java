package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ParsedTest {

  @Test
  void detailsWithWarningsAreValidAndReturnedByOrThrow() throws Exception {
    Parsed<String> parsed = Parsed.of("settings", List.of("x is not a known field; ignored"));
    assertThat(parsed.details()).contains("settings");
    assertThat(parsed.orThrow()).isEqualTo("settings");
    assertThat(parsed.validation().valid()).isTrue();
    assertThat(parsed.validation().warnings()).containsExactly("x is not a known field; ignored");
  }

  @Test
  void failedParseThrowsEveryErrorInOneMessage() {
    Parsed<String> parsed = Parsed.failed(List.of("a is required", "b must be >= 1"), List.of());
    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.validation().valid()).isFalse();
    assertThat(parsed.validation().errors()).containsExactly("a is required", "b must be >= 1");
    assertThatThrownBy(parsed::orThrow)
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessage("a is required; b must be >= 1");
  }

  @Test
  void nullDetailsMeanNoneAndTheListsAreCopies() {
    List<String> errors = new ArrayList<>(List.of("a"));
    Parsed<String> parsed = new Parsed<>(null, errors, List.of());
    errors.add("b");
    assertThat(parsed.details()).isEqualTo(Optional.empty());
    assertThat(parsed.errors()).containsExactly("a");
  }
}
