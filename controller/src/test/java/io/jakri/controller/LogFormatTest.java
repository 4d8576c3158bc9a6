package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import com.fasterxml.jackson.databind.JsonNode;
import io.jakri.logging.LogFormat;
import io.jakri.logging.ShippedLogback;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * The controller's shipped {@code logback.xml} switched by {@link LogFormat} (the switching itself
 * is tested in {@code logging/}; the packaged jar by {@code JsonLogIT}).
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
      assertThat(logback.level("io.fabric8")).hasValue(Level.WARN);
      JsonNode line = logback.jsonLine("io.jakri.controller.Example", Map.of(), Map.of());
      assertThat(line.path("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*");
      assertThat(line.path("level").asText()).isEqualTo("WARN");
      assertThat(line.path("logger").asText()).isEqualTo("io.jakri.controller.Example");
      assertThat(line.path("thread").asText()).isEqualTo("jakri-worker-1");
      assertThat(line.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(line.has(LogFormat.VARIABLE)).isFalse();
      assertThat(line.has("node")).as("the controller runs on no particular node").isFalse();
    }
  }
}
