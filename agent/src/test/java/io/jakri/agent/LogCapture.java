package io.jakri.agent;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.AppenderBase;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.LoggerFactory;

/**
 * Collects what one logger (and its children) logs while the agent's threads keep logging: the list
 * is safe to read while other threads append, unlike logback's {@code ListAppender}.
 */
public final class LogCapture extends AppenderBase<ILoggingEvent> implements AutoCloseable {

  private final List<ILoggingEvent> events = new CopyOnWriteArrayList<>();
  private final Logger logger;
  private final Level previous;

  private LogCapture(Logger logger, Level level) {
    this.logger = logger;
    this.previous = logger.getLevel();
    if (level != null) {
      logger.setLevel(level);
    }
    start();
    logger.addAppender(this);
  }

  /** Captures the root logger at its configured level. */
  public static LogCapture root() {
    return new LogCapture((Logger) LoggerFactory.getLogger(Logger.ROOT_LOGGER_NAME), null);
  }

  /** Captures one logger at its configured level. */
  public static LogCapture of(Class<?> type) {
    return new LogCapture((Logger) LoggerFactory.getLogger(type), null);
  }

  /** Captures one logger, lowered or raised to {@code level} until closed. */
  public static LogCapture of(String name, Level level) {
    return new LogCapture((Logger) LoggerFactory.getLogger(name), level);
  }

  @Override
  protected void append(ILoggingEvent event) {
    events.add(event);
  }

  /** What was logged so far, a snapshot. */
  public List<ILoggingEvent> events() {
    return List.copyOf(events);
  }

  /** The formatted messages logged so far. */
  public List<String> messages() {
    return events.stream().map(ILoggingEvent::getFormattedMessage).toList();
  }

  @Override
  public void close() {
    logger.detachAppender(this);
    logger.setLevel(previous);
    stop();
  }
}
