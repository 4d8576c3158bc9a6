package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import org.junit.jupiter.api.Test;

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
}
