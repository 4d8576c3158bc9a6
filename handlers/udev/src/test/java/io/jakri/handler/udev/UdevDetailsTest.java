package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.Parsed;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class UdevDetailsTest {

  @Test
  void akrisVideoDetailsParseWithDefaults() {
    Parsed<UdevDetails> parsed = UdevDetails.parse("udevRules:\n-  'KERNEL==\"video[0-9]*\"'\n");
    assertThat(parsed.errors()).isEmpty();
    UdevDetails d = parsed.details().orElseThrow();
    assertThat(d.rules()).hasSize(1);
    assertThat(d.groupRecursive()).isFalse();
    assertThat(d.permissions()).isEqualTo("rwm");
    assertThat(d.rescanInterval()).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void akrisChartDetailsParse() {
    Parsed<UdevDetails> parsed =
        UdevDetails.parse(
            "groupRecursive: true\nudevRules:\n- KERNEL==\"video[0-9]*\"\npermissions: rw\n");
    assertThat(parsed.errors()).isEmpty();
    assertThat(parsed.details().orElseThrow().groupRecursive()).isTrue();
    assertThat(parsed.details().orElseThrow().permissions()).isEqualTo("rw");
  }

  @Test
  void everyProblemIsReportedNamingItsField() {
    Parsed<UdevDetails> parsed =
        UdevDetails.parse(
            """
            udevRules:
            - KERNEL=="a"
            - ACTION=="add"
            - KERNEL=="b
            groupRecursive: maybe
            permissions: wr
            rescanIntervalSeconds: 0
            udevRule: typo
            """);
    assertThat(parsed.details()).isEmpty();
    assertThat(parsed.errors())
        .hasSize(5)
        .anyMatch(
            e -> e.startsWith("udevRules[1] \"ACTION==\"add\"\": column 1: unsupported field"))
        .anyMatch(e -> e.startsWith("udevRules[2] \"KERNEL==\"b\": column 9: unbalanced quote"))
        .anyMatch(e -> e.contains("groupRecursive"))
        .contains(
            "permissions must be one of r, w, m, rw, rm, wm, rwm (letters in that order) but is"
                + " \"wr\"",
            "rescanIntervalSeconds must be between 1 and 3600 but is 0");
    assertThat(parsed.warnings())
        .containsExactly("udevRule is not a udev discovery detail and is ignored");
  }

  @Test
  void missingOrEmptyRuleListIsAnError() {
    String expected =
        "udevRules is required: a list of at least one udev rule such as KERNEL==\"video[0-9]*\"";
    assertThat(UdevDetails.parse("").errors()).containsExactly(expected);
    assertThat(UdevDetails.parse("udevRules: []").errors()).containsExactly(expected);
    assertThat(UdevDetails.parse("udevRules: KERNEL==\"x\"").errors())
        .singleElement()
        .asString()
        .contains("udevRules");
  }

  @Test
  void tenThousandRulesAreRefusedWithOneLine() {
    // Short enough to pass the 64 KiB YAML limit, too many rules.
    String yaml = "udevRules: [" + "\"\",".repeat(10_000) + "\"\"]";
    assertThat(yaml.length()).isLessThan(64 * 1024);
    assertThat(UdevDetails.parse(yaml).errors())
        .containsExactly("udevRules has 10001 rules; at most 1000 are accepted");
  }

  @Test
  void aMegabyteDocumentIsRefusedByTheYamlLimit() {
    String yaml = "udevRules:\n- KERNEL==\"" + "a".repeat(1 << 20) + "\"\n";
    assertThat(UdevDetails.parse(yaml).errors())
        .singleElement()
        .asString()
        .startsWith("discoveryDetails: ")
        .contains("larger than");
  }
}
