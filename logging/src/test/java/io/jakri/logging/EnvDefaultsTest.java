package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

class EnvDefaultsTest {

  @Command(name = "t")
  static final class Flags {
    @Option(
        names = "--offline-grace",
        defaultValue = "60s",
        converter = DurationText.Converter.class)
    Duration offlineGrace;

    @Option(
        names = {"-w", "--workers"},
        defaultValue = "4")
    int workers;

    @Option(names = "--node-name")
    String nodeName;
  }

  private static Flags parse(Map<String, String> env, String... args) {
    Flags flags = new Flags();
    CommandLine cmd = new CommandLine(flags);
    cmd.setDefaultValueProvider(new EnvDefaults(env::get));
    cmd.parseArgs(args);
    return flags;
  }

  @Test
  void eachFlagReadsJakriAndItsNameInCapitals() {
    assertThat(EnvDefaults.variable("--offline-grace")).isEqualTo("JAKRI_OFFLINE_GRACE");
    Flags flags =
        parse(Map.of("JAKRI_OFFLINE_GRACE", "2m", "JAKRI_WORKERS", "8", "JAKRI_NODE_NAME", "n1"));
    assertThat(flags.offlineGrace).isEqualTo(Duration.ofMinutes(2));
    assertThat(flags.workers).isEqualTo(8);
    assertThat(flags.nodeName).isEqualTo("n1");
  }

  @Test
  void unsetOrEmptyFallsBackToTheOptionsDefault() {
    Flags flags = parse(Map.of("JAKRI_OFFLINE_GRACE", ""));
    assertThat(flags.offlineGrace).isEqualTo(Duration.ofSeconds(60));
    assertThat(flags.workers).isEqualTo(4);
    assertThat(flags.nodeName).isNull();
  }

  @Test
  void theCommandLineBeatsTheEnvironment() {
    Flags flags = parse(Map.of("JAKRI_WORKERS", "8"), "--workers", "2");
    assertThat(flags.workers).isEqualTo(2);
  }

  private static final Map<String, String> AKRI =
      Map.of("--node-name", "AGENT_NODE_NAME", "--workers", "WORKERS");

  @Test
  void akrisNameIsReadWhenJakrisIsUnsetAndSaidOnce() {
    Flags flags = new Flags();
    EnvDefaults defaults = new EnvDefaults(Map.of("AGENT_NODE_NAME", "akri-node")::get, AKRI);
    CommandLine cmd = new CommandLine(flags);
    cmd.setDefaultValueProvider(defaults);
    cmd.parseArgs();
    CommandLine.ParseResult parsed = cmd.parseArgs();

    assertThat(flags.nodeName).isEqualTo("akri-node");
    assertThat(flags.workers).isEqualTo(4);
    assertThat(defaults.akriNamesUsed(parsed))
        .containsExactly(
            "--node-name from Akri's env AGENT_NODE_NAME (JAKRI_NODE_NAME is not set; it would"
                + " win)");
  }

  @Test
  void jakrisNameWinsOverAkrisAndTheFlagOverBoth() {
    Map<String, String> env =
        Map.of("AGENT_NODE_NAME", "akri-node", "JAKRI_NODE_NAME", "jakri-node", "WORKERS", "7");
    Flags flags = new Flags();
    EnvDefaults defaults = new EnvDefaults(env::get, AKRI);
    CommandLine cmd = new CommandLine(flags);
    cmd.setDefaultValueProvider(defaults);
    CommandLine.ParseResult parsed = cmd.parseArgs("--workers", "2");

    assertThat(flags.nodeName).isEqualTo("jakri-node");
    assertThat(flags.workers).isEqualTo(2);
    // Neither Akri name gave a value: JAKRI_NODE_NAME won, and --workers came from the flag.
    assertThat(defaults.akriNamesUsed(parsed)).isEmpty();
  }

  @Test
  void withoutAkriNamesAkrisVarsAreNotRead() {
    Flags flags = parse(Map.of("AGENT_NODE_NAME", "akri-node"));
    assertThat(flags.nodeName).isNull();
  }
}
