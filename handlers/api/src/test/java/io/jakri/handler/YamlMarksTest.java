package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.StringReader;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.error.Mark;
import org.yaml.snakeyaml.nodes.Node;

class YamlMarksTest {

  private static Node compose(String yaml) {
    return SafeYaml.parser(SafeYaml.MAX_CODE_POINTS, 20).compose(new StringReader(yaml));
  }

  private static String at(String yaml, String path) {
    Mark mark = YamlMarks.find(compose(yaml), path);
    return mark == null ? "none" : YamlMarks.lineColumn(mark);
  }

  @Test
  void findsKeysListItemsAndKeysHoldingDots() {
    String yaml =
        """
        brokers:
          - url: tcp://a
          - url: tcp://b
        labels:
          akri.sh/instance: x
          akri: y
        """;
    assertThat(at(yaml, "brokers")).isEqualTo("line 1, column 1");
    assertThat(at(yaml, "brokers[1]")).isEqualTo("line 3, column 5");
    assertThat(at(yaml, "brokers[1].url")).isEqualTo("line 3, column 5");
    assertThat(at(yaml, "labels.akri.sh/instance")).isEqualTo("line 5, column 3");
    assertThat(at(yaml, "labels.akri")).isEqualTo("line 6, column 3");
  }

  @Test
  void aMissingStepGivesTheNearestEnclosingNodeAndAnUnknownFirstStepNothing() {
    String yaml = "brokers:\n  - url: tcp://a\n";
    assertThat(at(yaml, "brokers[7].url")).isEqualTo("line 1, column 1");
    assertThat(at(yaml, "brokers[0].port")).isEqualTo("line 2, column 5");
    assertThat(at(yaml, "brokers[x]")).isEqualTo("line 1, column 1");
    assertThat(at(yaml, "topics")).isEqualTo("none");
  }

  @Test
  void aRecursiveAliasIsWalkedOnlyAsFarAsThePath() {
    String yaml = "a: &x\n  b: *x\n";
    // Composing allows the recursive node; the walk follows it only for the path's steps.
    assertThat(at(yaml, "a.b.b.b.b.c")).isEqualTo("line 2, column 3");
  }

  @Test
  void aSyntaxErrorIsFoundWithItsLineColumnAndProblem() {
    YamlMarks.SyntaxError e = YamlMarks.firstSyntaxError("a: 1\nb: [2\n").orElseThrow();
    assertThat(e.lineColumn()).startsWith("line 3");
    assertThat(e.problem()).isNotBlank();
    assertThat(YamlMarks.firstSyntaxError("a: 1\n")).isEmpty();
    assertThat(YamlMarks.firstSyntaxError("x".repeat(SafeYaml.MAX_CODE_POINTS + 1))).isEmpty();
  }

  @Test
  void theSyntaxErrorIsFoundAmongAnExceptionsCauses() {
    InvalidDetailsException wrapped =
        org.junit.jupiter.api.Assertions.assertThrows(
            InvalidDetailsException.class, () -> SafeYaml.load("a: 1\n  b: 2\n"));
    assertThat(YamlMarks.syntaxError(wrapped))
        .map(YamlMarks.SyntaxError::lineColumn)
        .contains("line 2, column 4");
    assertThat(YamlMarks.syntaxError(new RuntimeException("plain"))).isEmpty();
  }
}
