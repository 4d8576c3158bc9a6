package io.jakri.logging;

import ch.qos.logback.classic.pattern.MessageConverter;
import ch.qos.logback.classic.spi.ILoggingEvent;

/**
 * Logback's {@code %msg} with {@link LogText#escape} applied: one event, one line (a stack trace,
 * written by {@code %ex}, still follows on lines of its own). Declared in a pattern layout with
 * {@code <conversionRule conversionWord="msg" class="...EscapedMessageConverter"/>}.
 */
public final class EscapedMessageConverter extends MessageConverter {

  @Override
  public String convert(ILoggingEvent event) {
    return LogText.escape(event.getFormattedMessage());
  }
}
