package io.jakri.handler.opcua;

/** Text from the network or the user made safe for one log line: escaped and cut short. */
final class Printable {

  /** Longest text put in a log line. */
  static final int MAX = 120;

  private Printable() {}

  /** Control characters, quotes and backslashes escaped, at most {@value #MAX} characters. */
  static String of(String text) {
    if (text == null) {
      return "";
    }
    StringBuilder out = new StringBuilder(Math.min(text.length(), MAX) + 8);
    int i = 0;
    for (; i < text.length() && out.length() < MAX; i++) {
      char c = text.charAt(i);
      if (c == '\\' || c == '"') {
        out.append('\\').append(c);
      } else if (c < 0x20 || c == 0x7F || Character.getType(c) == Character.FORMAT) {
        out.append(String.format("\\u%04x", (int) c));
      } else {
        out.append(c);
      }
    }
    if (i < text.length()) {
      out.append("...");
    }
    return out.toString();
  }
}
