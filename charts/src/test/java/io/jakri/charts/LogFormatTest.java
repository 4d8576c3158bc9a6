package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The {@code logFormat} value becomes {@code --log-format} of both the agent and the controller.
 */
class LogFormatTest {

  private static List<String> args(RenderedChart chart, String kind, String name) {
    return RenderedChart.strings(
        maps(get(chart.one(kind, name), "spec", "template", "spec", "containers"))
            .get(0)
            .get("args"));
  }

  @Test
  void bothBinariesLogTextByDefault() {
    RenderedChart chart = RenderedChart.render();

    assertThat(args(chart, "DaemonSet", "jakri-agent")).contains("--log-format=text");
    assertThat(args(chart, "Deployment", "jakri-controller")).contains("--log-format=text");
  }

  @Test
  void logFormatJsonReachesTheAgentAndTheController() {
    RenderedChart chart = RenderedChart.render("json-logs.yaml");

    assertThat(args(chart, "DaemonSet", "jakri-agent"))
        .contains("--log-format=json")
        .doesNotContain("--log-format=text");
    assertThat(args(chart, "Deployment", "jakri-controller"))
        .contains("--log-format=json")
        .doesNotContain("--log-format=text");
  }

  @Test
  void anUnknownLogFormatFailsTheRenderWithAPointedMessage() {
    assertThatThrownBy(() -> RenderedChart.render("bad-log-format.yaml"))
        .hasMessageContaining("logFormat must be text or json, not \"xml\"");
  }
}
