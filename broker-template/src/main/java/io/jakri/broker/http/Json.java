package io.jakri.broker.http;

/**
 * JSON string escaping for text that must be treated as hostile (device properties from discovery).
 * Pure functions.
 */
public final class Json {

  private static final char[] HEX = "0123456789abcdef".toCharArray();

  private Json() {}

  /**
   * {@code text} as a JSON string literal, quotes included. Escapes {@code "} and {@code \}, every
   * control character (C0, DEL, C1), U+2028/U+2029 (line breaks in JavaScript) and {@code < > & '}
   * (so the output is inert even if a browser sniffs it as HTML); a lone surrogate becomes U+FFFD,
   * so the result is always well-formed UTF-16 and encodes to valid UTF-8.
   */
  public static String quote(String text) {
    StringBuilder out = new StringBuilder(text.length() + 2);
    out.append('"');
    for (int i = 0; i < text.length(); i++) {
      char c = text.charAt(i);
      switch (c) {
        case '"' -> out.append("\\\"");
        case '\\' -> out.append("\\\\");
        case '\n' -> out.append("\\n");
        case '\r' -> out.append("\\r");
        case '\t' -> out.append("\\t");
        case '\b' -> out.append("\\b");
        case '\f' -> out.append("\\f");
        default -> {
          if (Character.isHighSurrogate(c)
              && i + 1 < text.length()
              && Character.isLowSurrogate(text.charAt(i + 1))) {
            out.append(c).append(text.charAt(++i));
          } else if (Character.isSurrogate(c)) {
            out.append("\\ufffd");
          } else if (c < 0x20
              || (c >= 0x7f && c <= 0x9f)
              || c == '\u2028'
              || c == '\u2029'
              || c == '<'
              || c == '>'
              || c == '&'
              || c == '\'') {
            unicodeEscape(out, c);
          } else {
            out.append(c);
          }
        }
      }
    }
    return out.append('"').toString();
  }

  private static void unicodeEscape(StringBuilder out, char c) {
    out.append("\\u")
        .append(HEX[(c >> 12) & 0xf])
        .append(HEX[(c >> 8) & 0xf])
        .append(HEX[(c >> 4) & 0xf])
        .append(HEX[c & 0xf]);
  }
}
