package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.stream.IntStream;
import org.junit.jupiter.api.Test;

class LogTextTest {

  @Test
  void boundedTextKeepsItsStartAndSaysHowLongItWas() {
    assertThat(LogText.bounded("short", 512)).isEqualTo("short");
    String cut = LogText.bounded("x".repeat(2_783), LogText.MAX_LINE);
    assertThat(cut).hasSize(LogText.MAX_LINE).startsWith("xxx").endsWith("... (2783 characters)");
    // A surrogate pair is never cut in two.
    String emoji = "a".repeat(489) + "\uD83D\uDE00".repeat(20);
    assertThat(LogText.bounded(emoji, 512)).doesNotContain("\uD83D.").hasSizeLessThanOrEqualTo(512);
  }

  @Test
  void firstFewNamesTheRestByTheirCount() {
    List<String> names = IntStream.range(0, 238).mapToObj(i -> "h" + i).toList();
    assertThat(LogText.firstFew(names, 3)).isEqualTo("h0, h1, h2 ... and 235 more");
    assertThat(LogText.firstFew(List.of("a", "b"), 3)).isEqualTo("a, b");
    assertThat(LogText.firstFew(List.of(), 3)).isEmpty();
  }
}
