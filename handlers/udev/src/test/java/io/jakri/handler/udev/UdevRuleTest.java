package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.InvalidDetailsException;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.ValueSource;

class UdevRuleTest {

  private static UdevRule parse(String text) throws InvalidDetailsException {
    return UdevRule.parse(0, text);
  }

  private static String error(String text) {
    try {
      UdevRule.parse(3, text);
    } catch (InvalidDetailsException e) {
      return e.getMessage();
    }
    throw new AssertionError("accepted: " + text);
  }

  @Test
  void akrisDetailedRuleGivesThreeFilters() throws Exception {
    UdevRule rule =
        parse("KERNEL==\"video[0-9]*\",SUBSYSTEM==\"video4linux\", ATTR{idVendor}==\"05a9\"");
    assertThat(rule.filters())
        .extracting(Filter::toString)
        .containsExactly(
            "KERNEL==\"video[0-9]*\"", "SUBSYSTEM==\"video4linux\"", "ATTR{idVendor}==\"05a9\"");
    assertThat(rule.filters()).extracting(Filter::column).containsExactly(1, 23, 49);
    assertThat(rule.warnings()).isEmpty();
  }

  /** The rules of Akri's test/example.rules with the number of filters Akri's test expects. */
  @ParameterizedTest
  @CsvSource(
      delimiter = '~',
      textBlock =
          """
          1~SUBSYSTEM=="video4linux"
          2~KERNEL=="video*", ENV{ID_SERIAL}=="?*"
          3~ENV{ID_PATH}=="?*", KERNEL=="video*|vbi*", DRIVER=="some driver"
          2~TAG=="uaccess",ENV{MAJOR}!=""
          2~KERNEL=="video[0-9]", DEVPATH!="/sys/path/to/device"
          2~ATTR{idProduct}=="1900", ENV{ID_MM_ERICSSON_MBM}=="1"
          2~ATTR{idVendor}=="0bdd", ENV{a name}=="Keyboard that has a mouse"
          2~KERNEL=="video[0-9]*", ENV{ID_V4L_CAPABILITIES}==":capture:"
          1~SUBSYSTEMS=="pci"
          2~ATTRS{idVendor}=="0bdd", DRIVERS!="a driver"
          1~TAGS=="uaccess"
          1~KERNELS=="card[0-9]*"
          """)
  void akrisExampleRulesParse(int filters, String rule) throws Exception {
    assertThat(parse(rule).filters()).hasSize(filters);
  }

  /** Akri's test/example-unsupported.rules: every one refused. */
  @ParameterizedTest
  @ValueSource(
      strings = {
        "RUN{builtin}+=\"uaccess\"",
        "LABEL=\"some label\"",
        "GOTO=\"end\"",
        "IMPORT{program}=\"v4l_id $devnode\"",
        "OPTIONS=\"some options\"",
        "OWNER=\"owner\"",
        "GROUP=\"group\"",
        "MODE=\"mode\"",
        "WAIT_FOR=\"queue/read_q\"",
        "ACTION==\"this action\"",
        "NAME==\"another_disk\"",
        "SYMLINK+=\"v4l/by-id/$env{ID_BUS}-$env{ID_SERIAL}-video-index$attr{index}\"",
        "TEST{key}==\"value",
        "PROGRAM==\"some program\"",
        "RESULT==\"some result\"",
        "CONST{key}==\"value\"",
        "SECLABEL{key}==\"value",
        "SYSCTL{key}==\"value\"",
        "TAG-=\"uaccess\"",
        "TAG+=\"uaccess\"",
        "TAG=\"uaccess\"",
        "TAG:=\"uaccess\"",
        "KERNEL==\"video[0-9]*\", TYPO==\"blah\", ATTR{idVendor}==\"05a9\""
      })
  void akrisUnsupportedRulesAreRefused(String rule) {
    assertThat(error(rule)).startsWith("udevRules[3] \"");
  }

  @Test
  void errorsNameTheRuleTheColumnAndTheProblem() {
    assertThat(error("KERNEL==\"a\", ACTION==\"add\""))
        .isEqualTo(
            "udevRules[3] \"KERNEL==\"a\", ACTION==\"add\"\": column 14: unsupported field ACTION:"
                + " discovery rules only match on DEVPATH, KERNEL, KERNELS, SUBSYSTEM, SUBSYSTEMS,"
                + " DRIVER, DRIVERS, ATTR{}, ATTRS{}, ENV{}, TAG and TAGS");
    assertThat(error("SUBSYSTEM==\"block\",KERNEL=\"zram0\""))
        .endsWith(
            "column 26: assignment \"=\" is not supported: discovery rules only match, with == or"
                + " !=");
    assertThat(error("FOO==\"x\"")).contains("column 1: unknown field FOO (supported: DEVPATH");
    assertThat(error("KERNEL==\"zram*"))
        .endsWith("column 9: unbalanced quote: the value opened here is never closed");
    assertThat(error("KERNEL!=\"zram[0-9\""))
        .contains("column 10: bad regular expression \"zram[0-9\" for KERNEL: ");
    assertThat(error("DRIVERS==\"*virtio\"")).contains("bad regular expression \"*virtio\"");
    assertThat(error("KERNEL==\"a\",")).endsWith("column 12: a filter must follow \",\"");
    assertThat(error("ATTRS==\"x\""))
        .endsWith("ATTRS needs a name in braces, such as ATTRS{idVendor}");
    assertThat(error("ATTR{}==\"x\"")).endsWith("ATTR{} needs a name between the braces");
    assertThat(error("ATTR{../../x}==\"1\"")).endsWith("an attribute name must not contain \"..\"");
    assertThat(error("KERNEL==\"a(b)\""))
        .contains("column 11: character '(' is not allowed in a value");
    assertThat(error("KERNEL==\"a\"\t")).contains("column 12: expected a field");
    assertThat(error("KERNEL\"a\""))
        .contains("column 7: expected == or != after KERNEL but found '\"'");
  }

  @Test
  void globFieldsAreNotCompiledAsRegularExpressions() throws Exception {
    // "*" alone is a fine wildcard for the enumerator's fields, a bad regex elsewhere.
    assertThat(parse("KERNEL==\"*\", SUBSYSTEM!=\"*x\", ATTR{a}!=\"*\"").filters()).hasSize(3);
  }

  @Test
  void aMegabyteRuleIsRefusedWithItsLength() {
    String huge = "KERNEL==\"" + "a".repeat(1 << 20) + "\"";
    assertThat(error(huge))
        .startsWith("udevRules[3] \"KERNEL==\"aaaa")
        .endsWith(": the rule is 1048586 characters long; at most 4096 are accepted")
        .hasSizeLessThan(200);
  }

  @Test
  void emptyRuleMatchesEverythingWithAWarning() throws Exception {
    UdevRule rule = parse("");
    assertThat(rule.filters()).isEmpty();
    assertThat(rule.warnings())
        .containsExactly("udevRules[0] \"\": the rule is empty and matches every device");
  }

  @Test
  void filtersNotJoinedByACommaAreIgnoredAsAkriDoesWithAWarning() throws Exception {
    UdevRule rule = parse("KERNEL==\"zram*\" SUBSYSTEM==\"block\"");
    assertThat(rule.filters()).extracting(Filter::toString).containsExactly("KERNEL==\"zram*\"");
    assertThat(rule.warnings())
        .containsExactly(
            "udevRules[0] \"KERNEL==\"zram*\" SUBSYSTEM==\"block\"\": column 17: 1 filter(s) not"
                + " joined to the rule by a comma are ignored, as Akri ignores them; write \",\""
                + " between filters");
  }

  @Test
  void spacesAroundCommasAndTheRuleAreAllowedAndKeysAndValuesKeepTheirs() throws Exception {
    UdevRule rule = parse("  ENV{a name} == \"x\"".replace(" == ", "==") + " ,  KERNEL==\"a b\"  ");
    assertThat(rule.filters()).extracting(Filter::key).containsExactly("a name", "");
    assertThat(rule.filters()).extracting(Filter::value).containsExactly("x", "a b");
  }

  @Test
  void regexFieldsFollowAkrisSplit() {
    assertThat(Filter.byRegex(Filter.Field.KERNEL, true)).isFalse();
    assertThat(Filter.byRegex(Filter.Field.KERNEL, false)).isTrue();
    assertThat(Filter.byRegex(Filter.Field.SUBSYSTEM, false)).isFalse();
    assertThat(Filter.byRegex(Filter.Field.ATTR, false)).isFalse();
    assertThat(Filter.byRegex(Filter.Field.ENV, false)).isTrue();
    for (Filter.Field f :
        List.of(
            Filter.Field.DRIVER,
            Filter.Field.KERNELS,
            Filter.Field.SUBSYSTEMS,
            Filter.Field.DRIVERS,
            Filter.Field.ATTRS,
            Filter.Field.TAGS)) {
      assertThat(Filter.byRegex(f, true)).as(f.name()).isTrue();
      assertThat(Filter.byRegex(f, false)).as(f.name()).isTrue();
    }
  }

  @Test
  void regexMatchIsLeftmostFirstOverTheWholeValueAsInAkri() throws Exception {
    Filter f = parse("KERNELS==\"video[0-9]*\"").filters().get(0);
    assertThat(f.regexMatches("video0")).isTrue();
    assertThat(f.regexMatches("video10")).isTrue();
    assertThat(f.regexMatches("blahvideo0blah")).isFalse();
    // Leftmost-first: "a" wins over "ab", so the match does not span "ab" (as Rust's find()).
    Filter alt = parse("KERNELS==\"a|ab\"").filters().get(0);
    assertThat(alt.regexMatches("ab")).isFalse();
    assertThat(alt.regexMatches("a")).isTrue();
  }
}
