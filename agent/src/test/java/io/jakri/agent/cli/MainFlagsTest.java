package io.jakri.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.logging.DurationText;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.util.List;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * Mistakes in the agent's flags are one line naming the flag and the rule, exit code 2, no usage
 * dump and no stack trace; durations in the help read like the flags take them ({@code 60s}).
 * Nothing here starts an agent: the flags fail before it would.
 */
class MainFlagsTest {

  private record Run(int code, List<String> out, List<String> err) {}

  private static Run run(String... args) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    CommandLine cmd = Main.commandLine();
    cmd.setOut(new PrintWriter(out, true));
    cmd.setErr(new PrintWriter(err, true));
    int code = cmd.execute(args);
    return new Run(code, lines(out), lines(err));
  }

  private static List<String> lines(StringWriter w) {
    return w.toString().lines().filter(l -> !l.isBlank()).toList();
  }

  @Test
  void aMetricsPortOutOfRangeIsOneLine() {
    Run run = run("--standalone", "--config", "c.yaml", "--metrics-port", "99999");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .containsExactly(
            "jakri-agent: Invalid value for option '--metrics-port': '99999' is not a port (use 0"
                + " to 65535; 0 for any free port) (see jakri-agent --help)");
  }

  @Test
  void aMetricsPortThatIsNotANumberIsOneLine() {
    Run run = run("--metrics-port", "http");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).hasSize(1);
    assertThat(run.err().get(0)).contains("'--metrics-port': 'http' is not a port");
  }

  @Test
  void aNegativeOfflineGraceIsOneLine() {
    Run run = run("--standalone", "--config", "c.yaml", "--offline-grace", "-5s");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .containsExactly(
            "jakri-agent: Invalid value for option '--offline-grace': '-5s' is negative (use 0 or"
                + " more, e.g. 60s, 2m, 500ms) (see jakri-agent --help)");
  }

  @Test
  void aNegativeGraceOfTheDemoIsOneLineNamingTheDemo() {
    Run run = run("demo", "--offline-grace", "-PT1M");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).hasSize(1);
    assertThat(run.err().get(0))
        .startsWith("jakri-agent demo: Invalid value for option '--offline-grace':")
        .endsWith("(see jakri-agent demo --help)");
  }

  @Test
  void aDemoConfigOrPluginsDirThatDoesNotExistIsOneLineAndExitsNonZero() {
    Run config = run("demo", "--once", "--config", "/nonexistent/jakri-configs");

    assertThat(config.code()).isEqualTo(2);
    assertThat(config.err())
        .containsExactly(
            "jakri-agent demo: --config /nonexistent/jakri-configs: no such file or directory (see"
                + " jakri-agent demo --help)");

    Run plugins = run("demo", "--once", "--plugins-dir", "/nonexistent/jakri-plugins");

    assertThat(plugins.code()).isEqualTo(2);
    assertThat(plugins.err())
        .containsExactly(
            "jakri-agent demo: --plugins-dir /nonexistent/jakri-plugins: no such file or directory"
                + " (see jakri-agent demo --help)");
  }

  @Test
  void aNegativeReclaimGraceIsOneLine() {
    Run run = run("--reclaim-grace", "-1ms");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err()).singleElement().asString().contains("'-1ms' is negative");
  }

  @Test
  void anExternalHandlerKeepaliveBelowGrpcsFloorIsOneLine() {
    Run run = run("--standalone", "--config", "c.yaml", "--external-handler-keepalive", "2s");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .containsExactly(
            "jakri-agent: Invalid value for option '--external-handler-keepalive': '2s' is below"
                + " gRPC's keepalive floor (use 10s or more, e.g. 30s, 5m) (see jakri-agent"
                + " --help)");
  }

  @Test
  void theExternalHandlerKeepaliveReachesTheSettingsAndDefaultsTo30s() throws Exception {
    Main chosen = new Main();
    new CommandLine(chosen)
        .parseArgs("--external-handler-keepalive", "5m", "--discovery-handlers-dir", "/x");
    Main plain = new Main();
    new CommandLine(plain).parseArgs("--discovery-handlers-dir", "/x");

    assertThat(chosen.externalHandlers().orElseThrow().settings().keepalive()).hasMinutes(5);
    assertThat(plain.externalHandlers().orElseThrow().settings().keepalive()).hasSeconds(30);
    assertThat(plain.externalHandlers().orElseThrow().settings())
        .isEqualTo(io.jakri.agent.external.ExternalHandlers.Settings.DEFAULT);
    assertThat(String.join(" ", run("--help").out()).replaceAll("\\s+", " "))
        .contains("--external-handler-keepalive")
        .contains("env JAKRI_EXTERNAL_HANDLER_KEEPALIVE; default 30s; at least 10s");
  }

  @Test
  void anUnknownFlagIsOneLine() {
    Run run = run("--no-such-flag");

    assertThat(run.code()).isEqualTo(2);
    assertThat(run.err())
        .containsExactly("jakri-agent: Unknown option: '--no-such-flag' (see jakri-agent --help)");
  }

  @Test
  void helpPrintsDurationsTheWayTheFlagsTakeThem() {
    Run agent = run("--help");
    Run demo = run("demo", "--help");

    assertThat(agent.code()).isZero();
    String help = String.join("\n", agent.out());
    assertThat(help)
        .contains("(default 60s)")
        .contains("(default 20s)")
        .doesNotContainPattern("PT[0-9]");
    assertThat(String.join("\n", demo.out()))
        .contains("(default 60s)")
        .doesNotContainPattern("PT[0-9]");
  }

  @Test
  void zeroIsAValidGraceAndPortAndIsoDurationsStillParse() {
    DurationText.Converter durations = new DurationText.Converter();
    Main.PortConverter ports = new Main.PortConverter();

    assertThat(durations.convert("0s")).isZero();
    assertThat(durations.convert("PT1M")).hasSeconds(60);
    assertThat(ports.convert("0")).isZero();
    assertThat(ports.convert("65535")).isEqualTo(65535);
  }

  private static Main parsedWith(java.util.Map<String, String> env, String... args) {
    CommandLine cmd = Main.commandLine(env::get);
    cmd.parseArgs(args);
    return cmd.getCommand();
  }

  @Test
  void akrisAgentNodeNameAndMetricsPortAreReadWhenJakrisAreUnset() {
    Main akri =
        parsedWith(
            java.util.Map.of("AGENT_NODE_NAME", "akri-node", "METRICS_PORT", "8080"),
            "--standalone");

    assertThat(akri.common.nodeName()).isEqualTo("akri-node");
    assertThat(akri.metricsPort).isEqualTo(8080);
    assertThat(akri.akriEnvUsed())
        .containsExactly(
            "--metrics-port from Akri's env METRICS_PORT (JAKRI_METRICS_PORT is not set; it would"
                + " win)",
            "--node-name from Akri's env AGENT_NODE_NAME (JAKRI_NODE_NAME is not set; it would"
                + " win)");
  }

  @Test
  void jakrisOwnEnvNamesWinOverAkrisAndTheFlagsOverBoth() {
    Main both =
        parsedWith(
            java.util.Map.of(
                "AGENT_NODE_NAME", "akri-node",
                "JAKRI_NODE_NAME", "jakri-node",
                "METRICS_PORT", "8080",
                "JAKRI_METRICS_PORT", "9090"));
    assertThat(both.common.nodeName()).isEqualTo("jakri-node");
    assertThat(both.metricsPort).isEqualTo(9090);
    assertThat(both.akriEnvUsed()).isEmpty();

    Main flags =
        parsedWith(
            java.util.Map.of("AGENT_NODE_NAME", "akri-node", "METRICS_PORT", "8080"),
            "--node-name",
            "flag-node",
            "--metrics-port",
            "7070");
    assertThat(flags.common.nodeName()).isEqualTo("flag-node");
    assertThat(flags.metricsPort).isEqualTo(7070);
    assertThat(flags.akriEnvUsed()).isEmpty();
  }

  @Test
  void theDemoKeepsItsOwnNodeNameWhateverAkrisEnvSays() {
    CommandLine cmd = Main.commandLine(java.util.Map.of("AGENT_NODE_NAME", "akri-node")::get);
    CommandLine.ParseResult parsed = cmd.parseArgs("demo");
    DemoCommand demo = parsed.subcommand().commandSpec().commandLine().getCommand();
    assertThat(demo.nodeName).isEqualTo("minikube");
  }
}
