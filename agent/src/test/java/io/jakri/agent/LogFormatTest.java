package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.joran.spi.JoranException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.Main.LogFormat;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;
import picocli.CommandLine;

/**
 * The shipped {@code logback.xml} and {@link LogFormat#apply(LoggerContext)}, on private logger
 * contexts (the packaged jar is tested by {@code JsonLogIT}).
 */
class LogFormatTest {

  static final URL SHIPPED = LogFormatTest.class.getClassLoader().getResource("logback.xml");

  private static LoggerContext configured(URL config, Optional<String> format)
      throws JoranException {
    LoggerContext context = new LoggerContext();
    format.ifPresent(f -> context.putProperty(LogFormat.VARIABLE, f));
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(config);
    return context;
  }

  private static ch.qos.logback.classic.Logger root(LoggerContext context) {
    return context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  @Test
  void jsonReconfiguresALogbackThatStartedAsTextAndOnlyOnce() throws Exception {
    LoggerContext context = configured(SHIPPED, Optional.of("text"));
    try {
      assertThat(root(context).getAppender("text")).isNotNull();

      assertThat(LogFormat.JSON.apply(context)).isTrue();

      assertThat(root(context).getAppender("json")).isNotNull();
      assertThat(jsonFields(context)).doesNotContain(LogFormat.VARIABLE);
      assertThat(root(context).getAppender("text")).isNull();
      // The rest of the configuration came back too.
      assertThat(context.getLogger("io.grpc").getLevel()).isEqualTo(Level.WARN);
      assertThat(LogFormat.JSON.apply(context)).isFalse();
      assertThat(LogFormat.TEXT.apply(context)).isTrue();
      assertThat(root(context).getAppender("text")).isNotNull();
    } finally {
      context.stop();
    }
  }

  /** The fields of a line the context's json appender writes for a plain event. */
  private static List<String> jsonFields(LoggerContext context) throws Exception {
    @SuppressWarnings("unchecked")
    OutputStreamAppender<ILoggingEvent> json =
        (OutputStreamAppender<ILoggingEvent>) root(context).getAppender("json");
    LoggingEvent event =
        new LoggingEvent(
            LogFormatTest.class.getName(), root(context), Level.INFO, "hello", null, null);
    // A LoggerContext of one's own has no MDC adapter to copy the map from.
    event.setMDCPropertyMap(Map.of());
    List<String> fields = new ArrayList<>();
    new ObjectMapper()
        .readTree(json.getEncoder().encode(event))
        .fieldNames()
        .forEachRemaining(fields::add);
    return fields;
  }

  @Test
  void aLogbackConfigurationWithoutTheseAppendersIsLeftAlone() throws Exception {
    URL custom = LogFormatTest.class.getClassLoader().getResource("logback-test.xml");
    LoggerContext context = configured(custom, Optional.empty());
    try {
      assertThat(LogFormat.JSON.apply(context)).isFalse();
      assertThat(root(context).getAppender("STDOUT")).isNotNull();
    } finally {
      context.stop();
    }
  }

  @Test
  void aJsonLineCarriesTimestampLevelLoggerThreadMessageMdcAndKeyValues() throws Exception {
    LoggerContext context = configured(SHIPPED, Optional.of("json"));
    try {
      @SuppressWarnings("unchecked")
      OutputStreamAppender<ILoggingEvent> json =
          (OutputStreamAppender<ILoggingEvent>) root(context).getAppender("json");
      LoggingEvent event =
          new LoggingEvent(
              LogFormatTest.class.getName(),
              context.getLogger("io.jakri.agent.Example"),
              Level.WARN,
              "Instance {} went offline",
              null,
              new Object[] {"sim-8120fe"});
      event.setThreadName("jakri-discovery");
      event.setMDCPropertyMap(Map.of("request", "r-1"));
      event.addKeyValuePair(new KeyValuePair("configuration", "sim"));

      String line = new String(json.getEncoder().encode(event), StandardCharsets.UTF_8);

      assertThat(line).endsWith("\n");
      assertThat(line.strip()).doesNotContain("\n");
      JsonNode node = new ObjectMapper().readTree(line);
      assertThat(node.path("timestamp").asText()).matches("\\d{4}-\\d\\d-\\d\\dT.*");
      assertThat(node.path("level").asText()).isEqualTo("WARN");
      assertThat(node.path("logger").asText()).isEqualTo("io.jakri.agent.Example");
      assertThat(node.path("thread").asText()).isEqualTo("jakri-discovery");
      assertThat(node.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(node.path("request").asText()).isEqualTo("r-1");
      assertThat(node.path("configuration").asText()).isEqualTo("sim");
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
