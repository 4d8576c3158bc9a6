package io.jakri.broker.http;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.charset.StandardCharsets;
import org.junit.jupiter.api.Test;

class JsonTest {

  @Test
  void plainTextIsOnlyQuoted() {
    assertThat(Json.quote("192.168.0.200")).isEqualTo("\"192.168.0.200\"");
    assertThat(Json.quote("")).isEqualTo("\"\"");
  }

  @Test
  void quotesBackslashesAndControlCharactersAreEscaped() {
    assertThat(Json.quote("a\"b\\c\nd\re\tf\u0001g\u007fh\u0085"))
        .isEqualTo("\"a\\\"b\\\\c\\nd\\re\\tf\\u0001g\\u007fh\\u0085\"");
  }

  @Test
  void markupAndJavaScriptLineBreaksAreEscaped() {
    assertThat(Json.quote("</script><b>&'\u2028\u2029"))
        .isEqualTo("\"\\u003c/script\\u003e\\u003cb\\u003e\\u0026\\u0027\\u2028\\u2029\"");
  }

  @Test
  void surrogatePairsStayAndLoneSurrogatesBecomeTheReplacementCharacter() {
    assertThat(Json.quote("\uD83D\uDE00")).isEqualTo("\"\uD83D\uDE00\"");
    assertThat(Json.quote("a\uD83Db\uDE00")).isEqualTo("\"a\\ufffdb\\ufffd\"");
    String quoted = Json.quote("\uD83D");
    assertThat(new String(quoted.getBytes(StandardCharsets.UTF_8), StandardCharsets.UTF_8))
        .isEqualTo(quoted);
  }
}
