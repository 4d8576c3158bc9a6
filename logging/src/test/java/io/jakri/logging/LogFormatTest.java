package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import java.net.URL;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import picocli.CommandLine;

/** {@link LogFormat} on private logger contexts configured like a binary's shipped file. */
class LogFormatTest {

  static final URL SHIPPED =
      LogFormatTest.class.getClassLoader().getResource("shipped-logback.xml");

  @Test
  void jsonReconfiguresALogbackThatStartedAsTextOnlyOnceAndTextSwitchesBack() throws Exception {
    try (ShippedLogback logback = new ShippedLogback(SHIPPED, LogFormat.TEXT)) {
      assertThat(logback.rootWritesTo("text")).isTrue();

      assertThat(logback.switchTo(LogFormat.JSON, Optional.of("node-a"))).isTrue();

      assertThat(logback.rootWritesTo("json")).isTrue();
      assertThat(logback.rootWritesTo("text")).isFalse();
      // The rest of the configuration came back too.
      assertThat(logback.level("io.example.noisy")).hasValue(Level.WARN);
      assertThat(logback.switchTo(LogFormat.JSON, Optional.of("node-a"))).isFalse();
      assertThat(logback.switchTo(LogFormat.TEXT, Optional.of("node-a"))).isTrue();
      assertThat(logback.rootWritesTo("text")).isTrue();
      assertThat(logback.switchTo(LogFormat.TEXT, Optional.of("node-b")))
          .as("text lines carry no node")
          .isFalse();
    }
  }

  @Test
  void aJsonLineCarriesItsFieldsMdcKeyValuesAndTheNodeButNoLogbackVariables() throws Exception {
    try (ShippedLogback logback = new ShippedLogback(SHIPPED, LogFormat.TEXT)) {
      logback.switchTo(LogFormat.JSON, Optional.of("node-a"));

      JsonNode line =
          logback.jsonLine(
              "io.jakri.Example", Map.of("request", "r-1"), Map.of("configuration", "sim"));
      assertThat(line.path("level").asText()).isEqualTo("WARN");
      assertThat(line.path("logger_name").asText()).isEqualTo("io.jakri.Example");
      assertThat(line.path("thread_name").asText()).isEqualTo("jakri-worker-1");
      assertThat(line.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(line.path("request").asText()).isEqualTo("r-1");
      assertThat(line.path("configuration").asText()).isEqualTo("sim");
      assertThat(line.path("node").asText()).isEqualTo("node-a");
      assertThat(line.has(LogFormat.VARIABLE)).isFalse();
      assertThat(line.has(LogFormat.NODE_PROPERTY)).isFalse();

      assertThat(logback.switchTo(LogFormat.JSON, Optional.of("node-b")))
          .as("another node name reconfigures")
          .isTrue();
      assertThat(logback.jsonLine("io.jakri.Example", Map.of(), Map.of()).path("node").asText())
          .isEqualTo("node-b");
    }
  }

  @Test
  void aLogbackConfigurationOtherThanTheShippedOneIsLeftAlone() throws Exception {
    URL custom = LogFormatTest.class.getClassLoader().getResource("logback-test.xml");
    try (ShippedLogback logback = new ShippedLogback(custom, LogFormat.TEXT)) {
      assertThat(logback.switchTo(LogFormat.JSON, Optional.of(SHIPPED), Optional.empty()))
          .isFalse();
      assertThat(logback.switchTo(LogFormat.JSON, Optional.empty(), Optional.empty())).isFalse();
      assertThat(logback.rootWritesTo("STDOUT")).isTrue();
    }
  }

  @Test
  void theConverterTakesTextOrJsonInAnyCaseAndRefusesOthers() {
    LogFormat.Converter converter = new LogFormat.Converter();

    assertThat(converter.convert("JSON")).isEqualTo(LogFormat.JSON);
    assertThat(converter.convert(" text ")).isEqualTo(LogFormat.TEXT);
    assertThatThrownBy(() -> converter.convert("xml"))
        .isInstanceOf(CommandLine.TypeConversionException.class)
        .hasMessageContaining("use text or json");
  }
}
