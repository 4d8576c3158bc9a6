package io.jakri.logging;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.classic.spi.LoggingEvent;
import ch.qos.logback.core.OutputStreamAppender;
import ch.qos.logback.core.joran.spi.JoranException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.Optional;
import org.slf4j.event.KeyValuePair;

/**
 * A binary's shipped logback configuration on a private logger context, for the binaries' tests
 * (this module's test-jar): configure it as one format, switch it with {@link LogFormat}, and see
 * the JSON line its {@code json} appender writes. Close it to stop the context.
 */
public final class ShippedLogback implements AutoCloseable {

  private final LoggerContext context = new LoggerContext();
  private final URL config;

  /** {@code config} configured with {@link LogFormat#VARIABLE} set to {@code format}. */
  public ShippedLogback(URL config, LogFormat format) throws JoranException {
    this.config = config;
    context.putProperty(LogFormat.VARIABLE, format.appenderName());
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    configurator.doConfigure(config);
  }

  /** {@link LogFormat#apply(LoggerContext, Optional, Optional)} with this configuration. */
  public boolean switchTo(LogFormat format, Optional<String> node) {
    return switchTo(format, Optional.of(config), node);
  }

  /** The same, with another file taken for the shipped one. */
  public boolean switchTo(LogFormat format, Optional<URL> shipped, Optional<String> node) {
    return format.apply(context, shipped, node);
  }

  /** Whether the root logger writes through an appender of this name. */
  public boolean rootWritesTo(String appender) {
    return root().getAppender(appender) != null;
  }

  /** Whether this configuration writes {@code event} (its logger's effective level lets it). */
  public boolean writes(ILoggingEvent event) {
    return context.getLogger(event.getLoggerName()).isEnabledFor(event.getLevel());
  }

  /** The configured level of {@code logger}, if it has one. */
  public Optional<Level> level(String logger) {
    return Optional.ofNullable(context.getLogger(logger).getLevel());
  }

  /**
   * The line the {@code json} appender writes for a WARN "Instance sim-8120fe went offline" from
   * {@code logger} on thread {@code jakri-worker-1}, with the given MDC entries and SLF4J
   * key-values.
   */
  public JsonNode jsonLine(String logger, Map<String, String> mdc, Map<String, String> keyValues)
      throws IOException {
    @SuppressWarnings("unchecked")
    OutputStreamAppender<ILoggingEvent> json =
        (OutputStreamAppender<ILoggingEvent>) root().getAppender("json");
    LoggingEvent event =
        new LoggingEvent(
            ShippedLogback.class.getName(),
            context.getLogger(logger),
            Level.WARN,
            "Instance {} went offline",
            null,
            new Object[] {"sim-8120fe"});
    event.setThreadName("jakri-worker-1");
    // A LoggerContext of one's own has no MDC adapter to copy the map from.
    event.setMDCPropertyMap(mdc);
    keyValues.forEach((k, v) -> event.addKeyValuePair(new KeyValuePair(k, v)));
    return new ObjectMapper()
        .readTree(new String(json.getEncoder().encode(event), StandardCharsets.UTF_8));
  }

  /** What the {@code text} appender writes for {@code event}. */
  public String textLine(ILoggingEvent event) {
    @SuppressWarnings("unchecked")
    OutputStreamAppender<ILoggingEvent> text =
        (OutputStreamAppender<ILoggingEvent>) root().getAppender("text");
    return new String(text.getEncoder().encode(event), StandardCharsets.UTF_8);
  }

  private ch.qos.logback.classic.Logger root() {
    return context.getLogger(org.slf4j.Logger.ROOT_LOGGER_NAME);
  }

  @Override
  public void close() {
    context.stop();
  }
}
