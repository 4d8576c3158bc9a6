package io.jakri.logging;

import java.util.Collection;

/**
 * Untrusted text (device ids, property names, file contents, handler messages) made safe for a log
 * line: line breaks and other control characters become visible escapes ({@code \n}, {@code \r},
 * {@code \t}, {@code \u001b}, ...), so such text can never start a forged line of its own. The text
 * format's {@code %msg} goes through {@link EscapedMessageConverter}, which applies this to every
 * message; JSON lines are escaped by their encoder.
 */
public final class LogText {

  private LogText() {}

  /** {@code text} with every control or line-separating character escaped. */
  public static String escape(String text) {
    if (text == null) {
      return "null";
    }
    int i = 0;
    while (i < text.length() && !needsEscape(text.charAt(i))) {
      i++;
    }
    if (i == text.length()) {
      return text;
    }
    StringBuilder out = new StringBuilder(text.length() + 16).append(text, 0, i);
    for (; i < text.length(); i++) {
      char c = text.charAt(i);
      if (!needsEscape(c)) {
        out.append(c);
      } else if (c == '\n') {
        out.append("\\n");
      } else if (c == '\r') {
        out.append("\\r");
      } else if (c == '\t') {
        out.append("\\t");
      } else {
        out.append(String.format("\\u%04x", (int) c));
      }
    }
    return out.toString();
  }

  /** {@code text} escaped and in double quotes, for names that may be blank or odd. */
  public static String quote(String text) {
    return "\"" + escape(text) + "\"";
  }

  /**
   * The longest log message the agent and the controller write about one thing (a Configuration, an
   * Instance, a failed call): a flood of long lines makes the log the attack.
   */
  public static final int MAX_LINE = 512;

  /**
   * {@code text} if it has at most {@code max} characters, else its start followed by {@code "...
   * (<n> more characters)"}, all of it at most {@code max} characters long.
   */
  public static String bounded(String text, int max) {
    if (text == null) {
      return "null";
    }
    if (text.length() <= max) {
      return text;
    }
    String tail = "... (" + text.length() + " characters)";
    int keep = Math.max(0, max - tail.length());
    // Never cut a surrogate pair in two.
    if (keep > 0 && Character.isHighSurrogate(text.charAt(keep - 1))) {
      keep--;
    }
    return text.substring(0, keep) + tail;
  }

  /**
   * The first {@code few} of {@code items}, comma-separated, and {@code "... and <n> more"} for the
   * rest: a list of names in a log line or status message stays short however many there are.
   */
  public static String firstFew(Collection<?> items, int few) {
    StringBuilder out = new StringBuilder();
    int i = 0;
    for (Object item : items) {
      if (i == few) {
        out.append(" ... and ").append(items.size() - few).append(" more");
        break;
      }
      if (i > 0) {
        out.append(", ");
      }
      out.append(item);
      i++;
    }
    return out.toString();
  }

  private static boolean needsEscape(char c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029';
  }
}
