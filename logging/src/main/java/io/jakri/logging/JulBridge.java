package io.jakri.logging;

import java.util.logging.Handler;
import java.util.logging.Level;
import java.util.logging.LogManager;
import java.util.logging.LogRecord;
import java.util.logging.SimpleFormatter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Sends {@code java.util.logging} records (gRPC logs through it) to SLF4J, so they come out in the
 * binary's own format instead of JUL's two-line {@code WARNING:} blocks on stderr. Records of
 * gRPC's and Netty's transport loggers (a peer's stream error, a reset connection) are about one
 * connection's misbehaving peer and go at DEBUG; other records keep their level (SEVERE: ERROR,
 * WARNING: WARN, INFO: INFO, CONFIG and FINE: DEBUG, finer: TRACE).
 */
public final class JulBridge extends Handler {

  private static final SimpleFormatter MESSAGES = new SimpleFormatter();

  private JulBridge() {}

  /**
   * Replaces the JUL root logger's handlers with the bridge (idempotent). Call from a binary's
   * composition root.
   */
  public static synchronized void install() {
    java.util.logging.Logger root = LogManager.getLogManager().getLogger("");
    for (Handler h : root.getHandlers()) {
      if (h instanceof JulBridge) {
        return;
      }
    }
    for (Handler h : root.getHandlers()) {
      root.removeHandler(h);
    }
    root.addHandler(new JulBridge());
  }

  /** Whether records of {@code logger} are transport noise, logged at DEBUG. */
  static boolean transport(String logger) {
    return logger != null
        && (logger.startsWith("io.grpc.netty")
            || logger.contains(".netty.")
            || logger.startsWith("io.netty"));
  }

  @Override
  public void publish(LogRecord record) {
    if (record == null) {
      return;
    }
    String name = record.getLoggerName() == null ? "jul" : record.getLoggerName();
    Logger logger = LoggerFactory.getLogger(name);
    int level = record.getLevel().intValue();
    String message = MESSAGES.formatMessage(record);
    Throwable thrown = record.getThrown();
    if (transport(name) || (level < Level.INFO.intValue() && level >= Level.FINE.intValue())) {
      if (logger.isDebugEnabled()) {
        logger.debug(message, thrown);
      }
    } else if (level >= Level.SEVERE.intValue()) {
      logger.error(message, thrown);
    } else if (level >= Level.WARNING.intValue()) {
      logger.warn(message, thrown);
    } else if (level >= Level.INFO.intValue()) {
      logger.info(message, thrown);
    } else if (logger.isTraceEnabled()) {
      logger.trace(message, thrown);
    }
  }

  @Override
  public void flush() {}

  @Override
  public void close() {}
}
