package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

class DetailsTest {

  @Test
  void emptyTextGivesEmptyDetailsWhoseOptionalFieldsAreAbsent() throws Exception {
    Details details = Details.parse("");
    assertThat(details.optionalString("a")).isEmpty();
    assertThat(details.optionalInt("b")).isEmpty();
    assertThat(details.stringList("c")).isEmpty();
    assertThat(details.stringMap("d")).isEmpty();
    assertThat(details.unknownKeys()).isEmpty();
  }

  @Test
  void scalarsAreReadAsTheirTypeOrAsText() throws Exception {
    Details details = Details.parse("s: text\nn: 42\nb: true\nq: \"17\"\nf: \"FALSE\"\n");
    assertThat(details.optionalString("s")).contains("text");
    assertThat(details.optionalString("n")).contains("42");
    assertThat(details.optionalInt("n")).contains(42);
    assertThat(details.optionalInt("q")).contains(17);
    assertThat(details.optionalBoolean("b")).contains(true);
    assertThat(details.optionalBoolean("f")).contains(false);
  }

  @ParameterizedTest
  @CsvSource(
      delimiter = '|',
      value = {
        "n: many | n must be an integer but is the string \"many\"",
        "n: 3000000000 | n must be an integer but is long 3000000000",
        "n: [1] | n must be an integer but is a list",
        "n: {a: 1} | n must be an integer but is a mapping",
      })
  void wrongTypesNameTheFieldTheExpectationAndWhatWasFound(String yaml, String message) {
    assertThatThrownBy(() -> Details.parse(yaml).optionalInt("n"))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessage(message);
  }

  @Test
  void nestedObjectsAndListsCarryTheirPathIntoMessagesAndUnknownKeys() throws Exception {
    Details details =
        Details.parse("outer:\n  inner: {x: 1}\nitems:\n  - {name: a, extra: 1}\n  - 7\n");
    Details outer = details.object("outer").orElseThrow();
    Details inner = outer.object("inner").orElseThrow();
    assertThat(inner.field("x")).isEqualTo("outer.inner.x");
    assertThat(inner.unknownKeys()).containsExactly("outer.inner.x");
    assertThatThrownBy(() -> details.objectList("items"))
        .hasMessage("items[1] must be a mapping but is integer 7");
    Details first = Details.of("items[0]", Map.of("name", "a", "extra", 1));
    assertThat(first.requireString("name")).isEqualTo("a");
    assertThat(first.unknownKeys()).containsExactly("items[0].extra");
  }

  @Test
  void keysAskedForAreKnownAndTheRestAreReportedUnknownInOrder() throws Exception {
    Details details = Details.parse("a: 1\nb: 2\nc: 3\n");
    details.optionalString("b");
    details.has("zzz");
    assertThat(details.unknownKeys()).containsExactly("a", "c");
  }

  @Test
  void aRequiredStringThatIsMissingSaysSo() {
    assertThatThrownBy(() -> Details.parse("other: 1").requireString("name"))
        .hasMessage("name is required");
  }

  @Test
  void listsAndMapsOfScalarsBecomeText() throws Exception {
    Details details = Details.parse("l: [a, 2, true]\nm: {k: 1, e: }\n");
    assertThat(details.stringList("l")).containsExactly("a", "2", "true");
    assertThat(details.stringMap("m")).containsExactly(Map.entry("k", "1"), Map.entry("e", ""));
    assertThatThrownBy(() -> Details.parse("l: [[1]]").stringList("l"))
        .hasMessage("l[0] must be a string but is a list");
  }

  @Test
  void longStringsAreShortenedInMessages() {
    assertThatThrownBy(() -> Details.parse("n: " + "x".repeat(100)).optionalInt("n"))
        .hasMessage("n must be an integer but is the string \"" + "x".repeat(40) + "...\"");
  }
}
