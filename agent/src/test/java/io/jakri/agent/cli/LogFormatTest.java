package io.jakri.agent.cli;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import io.jakri.logging.LogFormat;
import io.jakri.logging.ShippedLogback;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/**
 * The agent's shipped {@code logback.xml} switched by {@link LogFormat} (the switching itself is
 * tested in {@code logging/}; the packaged jar by {@code JsonLogIT}).
 */
class LogFormatTest {

  @Test
  void theShippedConfigurationSwitchesToJsonLinesWithTheDocumentedFields() throws Exception {
    try (ShippedLogback logback =
        new ShippedLogback(
            LogFormatTest.class.getClassLoader().getResource("logback.xml"), LogFormat.TEXT)) {
      assertThat(logback.rootWritesTo("text")).isTrue();

      assertThat(logback.switchTo(LogFormat.JSON, Optional.of("node-a"))).isTrue();

      assertThat(logback.rootWritesTo("text")).isFalse();
      assertThat(logback.level("io.grpc")).hasValue(Level.WARN);
      JsonNode line = logback.jsonLine("io.jakri.agent.Example", Map.of(), Map.of());
      assertThat(line.path("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*");
      assertThat(line.path("level").asText()).isEqualTo("WARN");
      assertThat(line.path("logger").asText()).isEqualTo("io.jakri.agent.Example");
      assertThat(line.path("thread").asText()).isEqualTo("jakri-worker-1");
      assertThat(line.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(line.has(LogFormat.VARIABLE)).isFalse();
      assertThat(line.path("node").asText())
          .as("the agent's node on every line")
          .isEqualTo("node-a");
    }
  }

  @Test
  void logFormatFlagTakesTextOrJsonInAnyCaseAndRefusesOthers() {
    Main main = new Main();
    new CommandLine(main).parseArgs("--log-format", "JSON");
    assertThat(main.logFormat).isEqualTo(LogFormat.JSON);
    new CommandLine(main).parseArgs("--log-format=text");
    assertThat(main.logFormat).isEqualTo(LogFormat.TEXT);
    assertThatThrownBy(() -> new CommandLine(new Main()).parseArgs("--log-format", "xml"))
        .isInstanceOf(CommandLine.ParameterException.class)
        .hasMessageContaining("use text or json");
  }
}
