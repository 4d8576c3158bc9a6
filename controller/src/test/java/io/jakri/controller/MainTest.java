package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.logging.LogFormat;
import java.time.Duration;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

class MainTest {

  @Test
  void durationsTakeUnitsOrIso8601() {
    assertThat(resync("250ms")).isEqualTo(Duration.ofMillis(250));
    assertThat(resync("90s")).isEqualTo(Duration.ofSeconds(90));
    assertThat(resync("5m")).isEqualTo(Duration.ofMinutes(5));
    assertThat(resync("1h")).isEqualTo(Duration.ofHours(1));
    assertThat(resync("PT2M")).isEqualTo(Duration.ofMinutes(2));
    assertThatThrownBy(() -> resync("soon"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("'soon' is not a duration");
  }

  private static Duration resync(String value) {
    Main main = new Main();
    new CommandLine(main).parseArgs("--resync", value);
    return main.resync;
  }

  @Test
  void flagsHaveTheDocumentedDefaults() {
    Main main = new Main();
    new CommandLine(main).parseArgs();
    // No namespace: every namespace is served, as Akri's controller does.
    assertThat(main.namespace).isEqualTo(System.getenv("JAKRI_NAMESPACE"));
    assertThat(main.pendingGrace).isEqualTo(Duration.ofMinutes(5));
    assertThat(main.nodeGrace).isEqualTo(Duration.ofMinutes(5));
    assertThat(main.resync).isEqualTo(Duration.ofMinutes(5));
    if (System.getenv("JAKRI_LOG_FORMAT") == null) {
      assertThat(main.logFormat).isEqualTo(LogFormat.TEXT);
    }
    new CommandLine(main).parseArgs("--namespace", "akri", "--pending-grace", "30s");
    assertThat(main.namespace).isEqualTo("akri");
    assertThat(main.pendingGrace).isEqualTo(Duration.ofSeconds(30));
  }

  @Test
  void logFormatTakesTextOrJsonInAnyCase() {
    Main main = new Main();
    new CommandLine(main).parseArgs("--log-format", "JSON");
    assertThat(main.logFormat).isEqualTo(LogFormat.JSON);
    new CommandLine(main).parseArgs("--log-format=text");
    assertThat(main.logFormat).isEqualTo(LogFormat.TEXT);
    assertThatThrownBy(() -> new CommandLine(new Main()).parseArgs("--log-format", "xml"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("use text or json");
  }

  @Test
  void versionPrintsTheVersion() {
    java.io.StringWriter out = new java.io.StringWriter();
    CommandLine cmd = new CommandLine(new Main());
    cmd.setOut(new java.io.PrintWriter(out, true));

    assertThat(cmd.execute("--version")).isZero();
    assertThat(out.toString().strip()).isEqualTo("jakri-controller 0.1.0");
  }

  @Test
  void theMetricsPortReadsAkrisMetricsPortWhenJakrisIsUnset() {
    CommandLine akri = Main.commandLine(java.util.Map.of("METRICS_PORT", "8080")::get);
    akri.parseArgs();
    Main fromAkri = akri.getCommand();
    assertThat(fromAkri.metricsPort).isEqualTo(8080);
    assertThat(fromAkri.akriEnvUsed())
        .containsExactly(
            "--metrics-port from Akri's env METRICS_PORT (JAKRI_METRICS_PORT is not set; it would"
                + " win)");

    CommandLine both =
        Main.commandLine(
            java.util.Map.of("METRICS_PORT", "8080", "JAKRI_METRICS_PORT", "9090")::get);
    both.parseArgs();
    Main jakri = both.getCommand();
    assertThat(jakri.metricsPort).isEqualTo(9090);
    assertThat(jakri.akriEnvUsed()).isEmpty();

    CommandLine flag = Main.commandLine(java.util.Map.of("METRICS_PORT", "8080")::get);
    flag.parseArgs("--metrics-port", "7070");
    Main fromFlag = flag.getCommand();
    assertThat(fromFlag.metricsPort).isEqualTo(7070);
    assertThat(fromFlag.akriEnvUsed()).isEmpty();

    CommandLine none = Main.commandLine(java.util.Map.<String, String>of()::get);
    none.parseArgs();
    assertThat(((Main) none.getCommand()).metricsPort).isZero();
  }
}
