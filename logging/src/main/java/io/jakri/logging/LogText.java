package io.jakri.logging;

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

  private static boolean needsEscape(char c) {
    return c < 0x20 || (c >= 0x7f && c <= 0x9f) || c == '\u2028' || c == '\u2029';
  }
}
