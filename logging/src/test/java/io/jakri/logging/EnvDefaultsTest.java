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
}
