package io.jakri.logging;

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
import java.net.URL;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.slf4j.event.KeyValuePair;
import picocli.CommandLine;

/** {@link LogFormat} on private logger contexts configured like a binary's shipped file. */
class LogFormatTest {

  static final URL SHIPPED =
      LogFormatTest.class.getClassLoader().getResource("shipped-logback.xml");

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

  /** The line the context's json appender writes for an event with MDC and a key-value. */
  private static JsonNode jsonLine(LoggerContext context) throws Exception {
    @SuppressWarnings("unchecked")
    OutputStreamAppender<ILoggingEvent> json =
        (OutputStreamAppender<ILoggingEvent>) root(context).getAppender("json");
    LoggingEvent event =
        new LoggingEvent(
            LogFormatTest.class.getName(),
            context.getLogger("io.jakri.Example"),
            Level.WARN,
            "Instance {} went offline",
            null,
            new Object[] {"sim-8120fe"});
    event.setThreadName("jakri-discovery");
    // A LoggerContext of one's own has no MDC adapter to copy the map from.
    event.setMDCPropertyMap(Map.of("request", "r-1"));
    event.addKeyValuePair(new KeyValuePair("configuration", "sim"));
    String line =
        new String(json.getEncoder().encode(event), java.nio.charset.StandardCharsets.UTF_8);
    assertThat(line).endsWith("\n");
    assertThat(line.strip()).doesNotContain("\n");
    return new ObjectMapper().readTree(line);
  }

  @Test
  void jsonReconfiguresALogbackThatStartedAsTextOnlyOnceAndTextSwitchesBack() throws Exception {
    LoggerContext context = configured(SHIPPED, Optional.of("text"));
    try {
      assertThat(root(context).getAppender("text")).isNotNull();

      assertThat(LogFormat.JSON.apply(context, Optional.of(SHIPPED), Optional.of("node-a")))
          .isTrue();

      assertThat(root(context).getAppender("json")).isNotNull();
      assertThat(root(context).getAppender("text")).isNull();
      // The rest of the configuration came back too.
      assertThat(context.getLogger("io.example.noisy").getLevel()).isEqualTo(Level.WARN);
      assertThat(LogFormat.JSON.apply(context, Optional.of(SHIPPED), Optional.of("node-a")))
          .isFalse();
      assertThat(LogFormat.TEXT.apply(context, Optional.of(SHIPPED), Optional.of("node-a")))
          .isTrue();
      assertThat(root(context).getAppender("text")).isNotNull();
      assertThat(LogFormat.TEXT.apply(context, Optional.of(SHIPPED), Optional.of("node-b")))
          .as("text lines carry no node")
          .isFalse();
    } finally {
      context.stop();
    }
  }

  @Test
  void aJsonLineCarriesItsFieldsMdcKeyValuesAndTheNodeButNoLogbackVariables() throws Exception {
    LoggerContext context = configured(SHIPPED, Optional.of("text"));
    try {
      LogFormat.JSON.apply(context, Optional.of(SHIPPED), Optional.of("node-a"));

      JsonNode line = jsonLine(context);
      assertThat(line.path("level").asText()).isEqualTo("WARN");
      assertThat(line.path("logger_name").asText()).isEqualTo("io.jakri.Example");
      assertThat(line.path("thread_name").asText()).isEqualTo("jakri-discovery");
      assertThat(line.path("message").asText()).isEqualTo("Instance sim-8120fe went offline");
      assertThat(line.path("request").asText()).isEqualTo("r-1");
      assertThat(line.path("configuration").asText()).isEqualTo("sim");
      assertThat(line.path("node").asText()).isEqualTo("node-a");
      assertThat(line.has(LogFormat.VARIABLE)).isFalse();
      assertThat(line.has(LogFormat.NODE_PROPERTY)).isFalse();

      assertThat(LogFormat.JSON.apply(context, Optional.of(SHIPPED), Optional.of("node-b")))
          .as("another node name reconfigures")
          .isTrue();
      assertThat(jsonLine(context).path("node").asText()).isEqualTo("node-b");
    } finally {
      context.stop();
    }
  }

  @Test
  void aLogbackConfigurationOtherThanTheShippedOneIsLeftAlone() throws Exception {
    URL custom = LogFormatTest.class.getClassLoader().getResource("logback-test.xml");
    LoggerContext context = configured(custom, Optional.empty());
    try {
      assertThat(LogFormat.JSON.apply(context, Optional.of(SHIPPED), Optional.empty())).isFalse();
      assertThat(LogFormat.JSON.apply(context, Optional.empty(), Optional.empty())).isFalse();
      assertThat(root(context).getAppender("STDOUT")).isNotNull();
    } finally {
      context.stop();
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
