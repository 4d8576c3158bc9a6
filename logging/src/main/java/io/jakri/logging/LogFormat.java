package io.jakri.logging;

import ch.qos.logback.classic.LoggerContext;
import ch.qos.logback.classic.joran.JoranConfigurator;
import ch.qos.logback.core.joran.spi.JoranException;
import ch.qos.logback.core.joran.util.ConfigurationWatchListUtil;
import java.net.URL;
import java.util.Locale;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine;

/**
 * The {@code --log-format} choices of the agent and the controller. Each binary ships a {@code
 * logback.xml} that includes {@code logback-${JAKRI_LOG_FORMAT:-text}.xml}, each defining one
 * appender named like its format; logback reads that when it initialises, which may be before the
 * flag is parsed, so {@link #apply} configures it again when the flag chose another format (or, for
 * JSON, another node name for the lines' {@code node} field).
 */
public enum LogFormat {
  /** Lines of text (where to, and their layout, is the binary's {@code logback-text.xml}). */
  TEXT,
  /**
   * One JSON object per line: {@code timestamp}, {@code level}, {@code logger}, {@code thread},
   * {@code message}, MDC entries and SLF4J key-values as fields, {@code stack_trace}.
   */
  JSON;

  /** The logback variable (system property, context property or env var) naming the format. */
  public static final String VARIABLE = "JAKRI_LOG_FORMAT";

  /** The logback context property a {@code logback-json.xml} may put in a {@code node} field. */
  public static final String NODE_PROPERTY = "JAKRI_NODE";

  /** Reads {@code text} or {@code json}, in any case, for picocli. */
  public static final class Converter implements CommandLine.ITypeConverter<LogFormat> {
    @Override
    public LogFormat convert(String value) {
      for (LogFormat format : values()) {
        if (format.appenderName().equalsIgnoreCase(value.strip())) {
          return format;
        }
      }
      throw new CommandLine.TypeConversionException(
          "'" + value + "' is not a log format (use text or json)");
    }
  }

  /** The appender's name, and the suffix of the included {@code logback-<name>.xml}. */
  public String appenderName() {
    return name().toLowerCase(Locale.ROOT);
  }

  /**
   * Makes logback log in this format (initialising it if nothing did yet), JSON lines naming {@code
   * node} when given. Call from the composition root before anything logs; not thread-safe against
   * concurrent logging.
   */
  public void apply(Optional<String> node) {
    if (LoggerFactory.getILoggerFactory() instanceof LoggerContext context) {
      apply(context, shipped(), node);
    }
  }

  /** The {@code logback.xml} on the class path (the binary's own). */
  public static Optional<URL> shipped() {
    return Optional.ofNullable(LogFormat.class.getClassLoader().getResource("logback.xml"));
  }

  /**
   * Configures {@code context} again from {@code shipped}, with {@link #VARIABLE} set to this
   * format and {@link #NODE_PROPERTY} to {@code node} (empty when absent), when {@code shipped}
   * configured it and its root logger does not already write through this format's appender (with
   * that node, for JSON). Does nothing otherwise: idempotent, and a custom {@code
   * -Dlogback.configurationFile} is left alone. Returns whether it reconfigured.
   */
  public boolean apply(LoggerContext context, Optional<URL> shipped, Optional<String> node) {
    ch.qos.logback.classic.Logger root = context.getLogger(Logger.ROOT_LOGGER_NAME);
    URL config = ConfigurationWatchListUtil.getMainWatchURL(context);
    String nodeName = node.orElse("");
    boolean nodeKnown = this == TEXT || nodeName.equals(context.getProperty(NODE_PROPERTY));
    if (config == null
        || shipped.isEmpty()
        || !config.toString().equals(shipped.get().toString())
        || (root.getAppender(appenderName()) != null && nodeKnown)) {
      return false;
    }
    context.reset();
    context.putProperty(VARIABLE, appenderName());
    context.putProperty(NODE_PROPERTY, nodeName);
    JoranConfigurator configurator = new JoranConfigurator();
    configurator.setContext(context);
    try {
      configurator.doConfigure(config);
    } catch (JoranException e) {
      // Logback keeps the failure in its status list; the binary runs on, logging or not.
      return false;
    }
    return true;
  }
}
