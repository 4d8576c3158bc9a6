package io.jakri.handler.coap;

import java.nio.charset.CharacterCodingException;
import java.nio.charset.CodingErrorAction;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;

/**
 * A hardened parser of RFC 6690 link format ({@code application/link-format}), the payload of
 * {@code GET /.well-known/core}. Everything it reads comes from whoever answers a multicast GET, so
 * it is bounded and strict:
 *
 * <ul>
 *   <li>a document over {@value #MAX_BYTES} bytes or not UTF-8 is rejected as a whole;
 *   <li>at most {@value #MAX_LINKS} links are kept (the rest counted in {@link Result#dropped});
 *   <li>a malformed link (no {@code <target>}, an unterminated quoted string, a bad parameter name,
 *       control characters, more than {@value #MAX_PARAMS} parameters, a value over {@value
 *       #MAX_VALUE} characters) is skipped with a reason, and parsing goes on after the next comma
 *       outside a quoted string;
 *   <li>quoted strings may hold {@code ,} and {@code ;} and backslash escapes; {@code rt}, {@code
 *       if} and {@code rel} are split at spaces, repeated parameters add values.
 * </ul>
 *
 * Pure and thread-safe.
 */
public final class LinkFormat {

  public static final int MAX_BYTES = 16 * 1024;
  public static final int MAX_LINKS = 256;
  public static final int MAX_PARAMS = 32;
  public static final int MAX_VALUE = 256;
  public static final int MAX_TARGET = 256;
  private static final Set<String> SPACE_SEPARATED = Set.of("rt", "if", "rel");

  private LinkFormat() {}

  /** A whole document refused. */
  public static final class Rejected extends Exception {
    private static final long serialVersionUID = 1L;

    Rejected(String reason) {
      super(reason);
    }
  }

  /**
   * What a document gave.
   *
   * @param links the well-formed links, in document order, at most {@value #MAX_LINKS}
   * @param malformed one reason per skipped link (at most {@value #MAX_LINKS} reasons kept)
   * @param dropped well-formed links over {@value #MAX_LINKS}, not kept
   */
  public record Result(List<Link> links, List<String> malformed, int dropped) {
    public Result {
      links = List.copyOf(links);
      malformed = List.copyOf(malformed);
    }
  }

  /** Parses a document of raw bytes (UTF-8). */
  public static Result parse(byte[] document, int length) throws Rejected {
    if (length > MAX_BYTES) {
      throw new Rejected("link format over " + MAX_BYTES + " bytes");
    }
    String text;
    try {
      text =
          StandardCharsets.UTF_8
              .newDecoder()
              .onMalformedInput(CodingErrorAction.REPORT)
              .onUnmappableCharacter(CodingErrorAction.REPORT)
              .decode(java.nio.ByteBuffer.wrap(document, 0, length))
              .toString();
    } catch (CharacterCodingException e) {
      throw new Rejected("link format is not UTF-8");
    }
    return parse(text);
  }

  /** Parses a document. */
  public static Result parse(String document) throws Rejected {
    if (document.length() > MAX_BYTES) {
      throw new Rejected("link format over " + MAX_BYTES + " bytes");
    }
    Scanner s = new Scanner(document);
    List<Link> links = new ArrayList<>();
    List<String> malformed = new ArrayList<>();
    int dropped = 0;
    s.skipWhitespace();
    if (s.atEnd()) {
      return new Result(links, malformed, 0);
    }
    while (true) {
      int start = s.pos;
      try {
        Link link = s.link();
        if (links.size() < MAX_LINKS) {
          links.add(link);
        } else {
          dropped++;
        }
      } catch (Malformed e) {
        if (malformed.size() < MAX_LINKS) {
          malformed.add("link at character " + start + ": " + e.getMessage());
        }
        s.pos = start; // quotes are tracked from the start of the link
        s.skipToComma();
      }
      s.skipWhitespace();
      if (s.atEnd()) {
        break;
      }
      if (s.peek() != ',') {
        // Only reached after a link parsed well and something other than ',' follows it.
        if (malformed.size() < MAX_LINKS) {
          malformed.add("link at character " + s.pos + ": expected ',' between links");
        }
        s.skipToComma();
        if (s.atEnd()) {
          break;
        }
      }
      s.pos++; // ','
      s.skipWhitespace();
    }
    return new Result(links, malformed, dropped);
  }

  private static final class Malformed extends Exception {
    private static final long serialVersionUID = 1L;

    Malformed(String reason) {
      super(reason, null, false, false);
    }
  }

  private static final class Scanner {
    private final String text;
    private int pos;

    Scanner(String text) {
      this.text = text;
    }

    boolean atEnd() {
      return pos >= text.length();
    }

    char peek() {
      return text.charAt(pos);
    }

    void skipWhitespace() {
      while (!atEnd() && (peek() == ' ' || peek() == '\t' || peek() == '\r' || peek() == '\n')) {
        pos++;
      }
    }

    /** Moves to the next ',' outside a quoted string (or the end). */
    void skipToComma() {
      boolean quoted = false;
      while (!atEnd()) {
        char c = peek();
        if (quoted && c == '\\') {
          pos += 2;
          continue;
        }
        if (c == '"') {
          quoted = !quoted;
        } else if (c == ',' && !quoted) {
          return;
        }
        pos++;
      }
      pos = text.length();
    }

    Link link() throws Malformed {
      if (atEnd() || peek() != '<') {
        throw new Malformed("does not start with '<'");
      }
      int close = text.indexOf('>', pos);
      if (close < 0) {
        throw new Malformed("'<' without '>'");
      }
      String target = text.substring(pos + 1, close);
      if (target.length() > MAX_TARGET) {
        throw new Malformed("target over " + MAX_TARGET + " characters");
      }
      for (int i = 0; i < target.length(); i++) {
        char c = target.charAt(i);
        if (c <= ' ' || c == '<' || c == '"' || c == 0x7f || c > 0x7e) {
          throw new Malformed("target holds a character not allowed in a URI reference");
        }
      }
      pos = close + 1;
      Map<String, List<String>> params = new LinkedHashMap<>();
      int count = 0;
      while (true) {
        skipWhitespace();
        if (atEnd() || peek() == ',') {
          break;
        }
        if (peek() != ';') {
          throw new Malformed("expected ';' or ',' after a parameter");
        }
        pos++;
        skipWhitespace();
        if (++count > MAX_PARAMS) {
          throw new Malformed("more than " + MAX_PARAMS + " parameters");
        }
        String name = name();
        List<String> values = params.computeIfAbsent(name, k -> new ArrayList<>());
        skipWhitespace();
        if (atEnd() || peek() != '=') {
          values.add("");
          continue;
        }
        pos++;
        skipWhitespace();
        String value = !atEnd() && peek() == '"' ? quoted() : ptoken();
        if (SPACE_SEPARATED.contains(name)) {
          for (String v : value.split(" ")) {
            if (!v.isEmpty()) {
              values.add(v);
            }
          }
        } else {
          values.add(value);
        }
        if (values.size() > MAX_PARAMS) {
          throw new Malformed("more than " + MAX_PARAMS + " values of " + name);
        }
      }
      return new Link(target, params);
    }

    private String name() throws Malformed {
      int start = pos;
      while (!atEnd()) {
        char c = peek();
        boolean ok =
            (c >= 'a' && c <= 'z')
                || (c >= 'A' && c <= 'Z')
                || (c >= '0' && c <= '9')
                || "!#$&+-.^_`|~*".indexOf(c) >= 0;
        if (!ok) {
          break;
        }
        pos++;
      }
      if (pos == start) {
        throw new Malformed("a parameter without a name");
      }
      if (pos - start > 64) {
        throw new Malformed("a parameter name over 64 characters");
      }
      return text.substring(start, pos).toLowerCase(Locale.ROOT);
    }

    private String quoted() throws Malformed {
      pos++; // opening quote
      StringBuilder b = new StringBuilder();
      while (true) {
        if (atEnd()) {
          throw new Malformed("unterminated quoted string");
        }
        char c = text.charAt(pos++);
        if (c == '"') {
          return b.toString();
        }
        if (c == '\\') {
          if (atEnd()) {
            throw new Malformed("unterminated quoted string");
          }
          c = text.charAt(pos++);
        }
        if (c < 0x20 && c != '\t' || c == 0x7f) {
          throw new Malformed("a control character in a quoted string");
        }
        if (b.length() >= MAX_VALUE) {
          throw new Malformed("a value over " + MAX_VALUE + " characters");
        }
        b.append(c);
      }
    }

    private String ptoken() throws Malformed {
      int start = pos;
      while (!atEnd()) {
        char c = peek();
        boolean ok =
            c > 0x20 && c < 0x7f && c != ',' && c != ';' && c != '"' && c != '\\' && c != '='
                && c != '<' && c != '>';
        if (!ok) {
          break;
        }
        pos++;
      }
      if (pos == start) {
        throw new Malformed("'=' without a value");
      }
      if (pos - start > MAX_VALUE) {
        throw new Malformed("a value over " + MAX_VALUE + " characters");
      }
      return text.substring(start, pos);
    }
  }
}
