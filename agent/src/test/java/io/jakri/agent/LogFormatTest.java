package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.logging.LogFormat;
import java.net.URL;
import java.nio.charset.StandardCharsets;
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
    URL shipped = LogFormatTest.class.getClassLoader().getResource("logback.xml");
    LoggerContext context = new LoggerContext();
    context.putProperty(LogFormat.VARIABLE, "text");
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(shipped);
    ch.qos.logback.classic.Logger root = context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
    try {
      assertThat(root.getAppender("text")).isNotNull();

      assertThat(LogFormat.JSON.apply(context, Optional.of(shipped), Optional.of("node-a")))
          .isTrue();

      assertThat(root.getAppender("text")).isNull();
      assertThat(context.getLogger("io.grpc").getLevel()).isEqualTo(Level.WARN);
      @SuppressWarnings("unchecked")
      OutputStreamAppender<ILoggingEvent> json =
          (OutputStreamAppender<ILoggingEvent>) root.getAppender("json");
      LoggingEvent event =
          new LoggingEvent(
              LogFormatTest.class.getName(),
              context.getLogger("io.jakri.agent.Example"),
              Level.WARN,
              "Instance {} went offline",
              null,
              new Object[] {"sim-8120fe"});
      event.setThreadName("jakri-worker-1");
      event.setMDCPropertyMap(Map.of());
      JsonNode line =
          new ObjectMapper()
              .readTree(new String(json.getEncoder().encode(event), StandardCharsets.UTF_8));
      assertThat(line.path("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*");
      assertThat(line.path("level").asText()).isEqualTo("WARN");
      assertThat(line.path("logger").asText()).isEqualTo("io.jakri.agent.Example");
      assertThat(line.path("thread").asText()).isEqualTo("jakri-worker-1");
      assertThat(line.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(line.has(LogFormat.VARIABLE)).isFalse();
      assertThat(line.path("node").asText())
          .as("the agent's node on every line")
          .isEqualTo("node-a");
    } finally {
      context.stop();
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
