package io.jakri.handler.udev;

/**
 * Shell wildcard matching as libudev's enumerator does it ({@code fnmatch(3)} without flags):
 * {@code *} any run of characters (also {@code /}), {@code ?} one character, {@code [...]} a set
 * with ranges, {@code !} or {@code ^} negation and POSIX classes such as {@code [:digit:]}, {@code
 * \} quotes the next character. An unterminated {@code [} stands for itself. Linear in practice:
 * one backtrack point (the last {@code *}).
 */
final class Glob {

  private Glob() {}

  /** Whether {@code text} matches {@code pattern} as a whole. */
  static boolean matches(String pattern, String text) {
    int p = 0;
    int t = 0;
    int starP = -1;
    int starT = -1;
    while (t < text.length()) {
      if (p < pattern.length()) {
        char c = pattern.charAt(p);
        if (c == '*') {
          starP = ++p;
          starT = t;
          continue;
        }
        int next = single(pattern, p, text.charAt(t));
        if (next > 0) {
          p = next;
          t++;
          continue;
        }
      }
      if (starP < 0) {
        return false;
      }
      p = starP;
      t = ++starT;
    }
    while (p < pattern.length() && pattern.charAt(p) == '*') {
      p++;
    }
    return p == pattern.length();
  }

  /**
   * Matches one pattern element at {@code p} (not {@code *}) against {@code ch}: the index after
   * the element when it matches, else -1.
   */
  private static int single(String pattern, int p, char ch) {
    char c = pattern.charAt(p);
    if (c == '?') {
      return p + 1;
    }
    if (c == '\\' && p + 1 < pattern.length()) {
      return pattern.charAt(p + 1) == ch ? p + 2 : -1;
    }
    if (c == '[') {
      int end = setEnd(pattern, p);
      if (end > 0) {
        return inSet(pattern, p + 1, end, ch) ? end + 1 : -1;
      }
    }
    return c == ch ? p + 1 : -1;
  }

  /** The index of the {@code ]} closing the set opened at {@code open}, or -1. */
  private static int setEnd(String pattern, int open) {
    int i = open + 1;
    if (i < pattern.length() && (pattern.charAt(i) == '!' || pattern.charAt(i) == '^')) {
      i++;
    }
    if (i < pattern.length() && pattern.charAt(i) == ']') {
      i++;
    }
    while (i < pattern.length()) {
      char c = pattern.charAt(i);
      if (c == '[' && i + 1 < pattern.length() && pattern.charAt(i + 1) == ':') {
        int close = pattern.indexOf(":]", i + 2);
        if (close > 0) {
          i = close + 2;
          continue;
        }
      }
      if (c == '\\' && i + 1 < pattern.length()) {
        i += 2;
        continue;
      }
      if (c == ']') {
        return i;
      }
      i++;
    }
    return -1;
  }

  private static boolean inSet(String pattern, int from, int end, char ch) {
    int i = from;
    boolean negate = false;
    if (pattern.charAt(i) == '!' || pattern.charAt(i) == '^') {
      negate = true;
      i++;
    }
    boolean found = false;
    boolean first = true;
    while (i < end) {
      char c = pattern.charAt(i);
      if (c == '[' && i + 1 < end && pattern.charAt(i + 1) == ':') {
        int close = pattern.indexOf(":]", i + 2);
        if (close > 0 && close < end) {
          found |= inClass(pattern.substring(i + 2, close), ch);
          i = close + 2;
          first = false;
          continue;
        }
      }
      if (c == ']' && !first) {
        break;
      }
      if (c == '\\' && i + 1 < end) {
        c = pattern.charAt(++i);
      }
      first = false;
      if (i + 2 < end && pattern.charAt(i + 1) == '-' && pattern.charAt(i + 2) != ']') {
        char hi = pattern.charAt(i + 2);
        if (hi == '\\' && i + 3 < end) {
          hi = pattern.charAt(i + 3);
          i++;
        }
        found |= c <= ch && ch <= hi;
        i += 3;
        continue;
      }
      found |= c == ch;
      i++;
    }
    return found != negate;
  }

  private static boolean inClass(String name, char ch) {
    return switch (name) {
      case "alpha" -> Character.isLetter(ch);
      case "digit" -> ch >= '0' && ch <= '9';
      case "alnum" -> Character.isLetterOrDigit(ch);
      case "upper" -> Character.isUpperCase(ch);
      case "lower" -> Character.isLowerCase(ch);
      case "space" -> Character.isWhitespace(ch);
      case "blank" -> ch == ' ' || ch == '\t';
      case "xdigit" -> Character.digit(ch, 16) >= 0 && ch < 128;
      case "punct" -> ch > 32 && ch < 127 && !Character.isLetterOrDigit(ch);
      case "print" -> ch >= 32 && ch != 127;
      case "graph" -> ch > 32 && ch != 127;
      case "cntrl" -> ch < 32 || ch == 127;
      default -> false;
    };
  }
}
