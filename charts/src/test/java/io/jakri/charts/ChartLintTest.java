package io.jakri.charts;

import static org.assertj.core.api.Assertions.assertThat;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import org.junit.jupiter.api.Test;

class ChartLintTest {

  @Test
  void strictLintReportsNoWarningsOrErrors() {
    LintResult result = new Helm(RenderedChart.CHART).lint().strict().call();

    assertThat(result.isFailed()).as("lint messages: %s", result.getMessages()).isFalse();
    assertThat(result.getMessages())
        .noneMatch(m -> m.contains("[WARNING]") || m.contains("[ERROR]"));
  }
}
