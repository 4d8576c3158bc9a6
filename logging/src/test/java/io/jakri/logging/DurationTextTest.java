package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import picocli.CommandLine;

class DurationTextTest {

  @Test
  void durationsReadLikeTheFlagsNotIso8601() {
    assertThat(DurationText.of(Duration.ofMinutes(5))).isEqualTo("5m");
    assertThat(DurationText.of(Duration.ofSeconds(60))).isEqualTo("60s");
    assertThat(DurationText.of(Duration.ofSeconds(90))).isEqualTo("90s");
    assertThat(DurationText.of(Duration.ofHours(2))).isEqualTo("2h");
    assertThat(DurationText.of(Duration.ofMillis(1500))).isEqualTo("1500ms");
    assertThat(DurationText.of(Duration.ZERO)).isEqualTo("0s");
  }

  @Test
  void flagsTakeUnitsBareSecondsOrIso8601() {
    assertThat(DurationText.parse("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(DurationText.parse("60s")).isEqualTo(Duration.ofSeconds(60));
    assertThat(DurationText.parse(" 5M ")).isEqualTo(Duration.ofMinutes(5));
    assertThat(DurationText.parse("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(DurationText.parse("90")).isEqualTo(Duration.ofSeconds(90));
    assertThat(DurationText.parse("pt2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(DurationText.parse("P1D")).isEqualTo(Duration.ofDays(1));
  }

  @ParameterizedTest
  @ValueSource(strings = {"60s", "5m", "2h", "1500ms", "0s", "90s"})
  void whatOfPrintsParsesBack(String text) {
    assertThat(DurationText.of(DurationText.parse(text))).isEqualTo(text);
  }

  @ParameterizedTest
  @ValueSource(strings = {"soon", "", "1.5s", "5 m", "ms", "p", "99999999999999999999h"})
  void anythingElseIsOneMessageNamingTheValue(String text) {
    assertThatThrownBy(() -> DurationText.parse(text))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("'" + text + "' is not a duration (use e.g. 60s, 2m, 500ms)");
  }

  @Test
  void theFlagConverterRefusesNegativeDurations() {
    DurationText.Converter converter = new DurationText.Converter();
    assertThat(converter.convert("0s")).isZero();
    assertThatThrownBy(() -> converter.convert("-5s"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessage("'-5s' is negative (use 0 or more, e.g. 60s, 2m, 500ms)");
    assertThatThrownBy(() -> converter.convert("-PT1M"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessageContaining("is negative");
    assertThatThrownBy(() -> converter.convert("soon"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessage("'soon' is not a duration (use e.g. 60s, 2m, 500ms)");
  }
}
