package io.jakri.handler.udev;

import com.google.re2j.Pattern;
import com.google.re2j.PatternSyntaxException;
import io.jakri.handler.InvalidDetailsException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;

/**
 * One rule of {@code udevRules}, parsed with Akri's grammar: comma-separated {@code FIELD==/!=
 * "value"} filters, all of which a device must pass. Only Akri's subset is accepted: the fields of
 * {@link Filter.Field}, the operators {@code ==} and {@code !=}; assignments, action fields and
 * unknown fields are errors naming the rule and the column. Spaces (only the space character) may
 * surround commas and the rule; none may appear inside a filter.
 *
 * <p>Akri's grammar also accepts further groups of filters not joined by a comma ({@code
 * KERNEL=="a" KERNEL=="b"}) and then uses only the first group; so does this parser, and it says so
 * in {@link #warnings()}. An empty rule has no filters and matches every device, as in Akri.
 *
 * @param index the rule's position in {@code udevRules}
 * @param text the rule as written
 * @param filters the filters of the first group
 * @param warnings what a user should know but does not make the rule invalid
 */
record UdevRule(int index, String text, List<Filter> filters, List<String> warnings) {

  /** Longest rule accepted, in characters. */
  static final int MAX_LENGTH = 4096;

  /** Most filters in one rule. */
  static final int MAX_FILTERS = 64;

  private static final Map<String, Filter.Field> FIELDS =
      Map.ofEntries(
          Map.entry("DEVPATH", Filter.Field.DEVPATH),
          Map.entry("KERNEL", Filter.Field.KERNEL),
          Map.entry("KERNELS", Filter.Field.KERNELS),
          Map.entry("SUBSYSTEM", Filter.Field.SUBSYSTEM),
          Map.entry("SUBSYSTEMS", Filter.Field.SUBSYSTEMS),
          Map.entry("DRIVER", Filter.Field.DRIVER),
          Map.entry("DRIVERS", Filter.Field.DRIVERS),
          Map.entry("ATTR", Filter.Field.ATTR),
          Map.entry("ATTRS", Filter.Field.ATTRS),
          Map.entry("ENV", Filter.Field.ENV),
          Map.entry("TAG", Filter.Field.TAG),
          Map.entry("TAGS", Filter.Field.TAGS));

  /** udev rule keys Akri's grammar knows and refuses (actions and matches it does not support). */
  private static final Set<String> UNSUPPORTED =
      Set.of(
          "ACTION",
          "CONST",
          "NAME",
          "PROGRAM",
          "RESULT",
          "SECLABEL",
          "SYMLINK",
          "SYSCTL",
          "TEST",
          "GOTO",
          "GROUP",
          "LABEL",
          "IMPORT",
          "OPTIONS",
          "OWNER",
          "MODE",
          "RUN",
          "WAIT_FOR");

  private static final String VALUE_PUNCTUATION = "$._*:?[]-|\\/%{}";
  private static final String KEY_PUNCTUATION = "$._*?[]-|\\/";

  UdevRule {
    Objects.requireNonNull(text, "text");
    filters = List.copyOf(filters);
    warnings = List.copyOf(warnings);
  }

  /** Parses rule {@code index}; the exception's message names the rule and the column. */
  static UdevRule parse(int index, String text) throws InvalidDetailsException {
    return new Parser(index, text).parse();
  }

  /** A rule for messages: {@code udevRules[2] "KERNEL==..."}, shortened. */
  static String name(int index, String text) {
    String shown = text.length() > 60 ? text.substring(0, 57) + "..." : text;
    return "udevRules[" + index + "] \"" + shown.replace("\n", "\\n") + "\"";
  }

  private static final class Parser {
    private final int index;
    private final String text;
    private int pos;

    Parser(int index, String text) {
      this.index = index;
      this.text = text;
    }

    private InvalidDetailsException error(int at, String message) {
      return new InvalidDetailsException(
          name(index, text) + ": column " + (at + 1) + ": " + message);
    }

    UdevRule parse() throws InvalidDetailsException {
      if (text.length() > MAX_LENGTH) {
        throw new InvalidDetailsException(
            name(index, text)
                + ": the rule is "
                + text.length()
                + " characters long; at most "
                + MAX_LENGTH
                + " are accepted");
      }
      List<String> warnings = new ArrayList<>();
      skipSpaces();
      List<Filter> first = List.of();
      if (pos < text.length()) {
        first = group();
        skipSpaces();
        while (pos < text.length()) {
          int start = pos;
          List<Filter> ignored = group();
          warnings.add(
              name(index, text)
                  + ": column "
                  + (start + 1)
                  + ": "
                  + ignored.size()
                  + " filter(s) not joined to the rule by a comma are ignored, as Akri ignores"
                  + " them; write \",\" between filters");
          skipSpaces();
        }
      } else {
        warnings.add(name(index, text) + ": the rule is empty and matches every device");
      }
      return new UdevRule(index, text, first, warnings);
    }

    private List<Filter> group() throws InvalidDetailsException {
      List<Filter> filters = new ArrayList<>();
      filters.add(filter());
      while (true) {
        int save = pos;
        skipSpaces();
        if (pos < text.length() && text.charAt(pos) == ',') {
          pos++;
          skipSpaces();
          if (pos >= text.length()) {
            throw error(pos - 1, "a filter must follow \",\"");
          }
          filters.add(filter());
          if (filters.size() > MAX_FILTERS) {
            throw error(pos - 1, "more than " + MAX_FILTERS + " filters in one rule");
          }
        } else {
          pos = save;
          return filters;
        }
      }
    }

    private void skipSpaces() {
      while (pos < text.length() && text.charAt(pos) == ' ') {
        pos++;
      }
    }

    private Filter filter() throws InvalidDetailsException {
      int start = pos;
      while (pos < text.length() && isFieldChar(text.charAt(pos))) {
        pos++;
      }
      String word = text.substring(start, pos);
      if (word.isEmpty()) {
        throw error(
            start,
            "expected a field such as KERNEL, SUBSYSTEM or ATTRS{name} but found "
                + describe(start));
      }
      String key = null;
      int keyStart = pos + 1;
      if (pos < text.length() && text.charAt(pos) == '{') {
        pos++;
        while (pos < text.length() && isKeyChar(text.charAt(pos))) {
          pos++;
        }
        if (pos >= text.length() || text.charAt(pos) != '}') {
          throw error(
              pos,
              pos >= text.length()
                  ? "\"{\" at column " + keyStart + " is not closed by \"}\""
                  : "character "
                      + quoteChar(text.charAt(pos))
                      + " is not allowed in a key (letters, digits, spaces and $ . _ * ? [ ] - |"
                      + " \\ / are)");
        }
        key = text.substring(keyStart, pos);
        pos++;
      }
      if (UNSUPPORTED.contains(word)) {
        throw error(
            start,
            "unsupported field "
                + word
                + ": discovery rules only match on DEVPATH, KERNEL, KERNELS, SUBSYSTEM, SUBSYSTEMS,"
                + " DRIVER, DRIVERS, ATTR{}, ATTRS{}, ENV{}, TAG and TAGS");
      }
      Filter.Field field = FIELDS.get(word);
      if (field == null) {
        throw error(
            start,
            "unknown field "
                + word
                + " (supported: DEVPATH, KERNEL, KERNELS, SUBSYSTEM, SUBSYSTEMS, DRIVER, DRIVERS,"
                + " ATTR{}, ATTRS{}, ENV{}, TAG, TAGS)");
      }
      if (field.keyed() && key == null) {
        throw error(start, word + " needs a name in braces, such as " + word + "{idVendor}");
      }
      if (!field.keyed() && key != null) {
        throw error(start, word + " takes no {key}");
      }
      if (field.keyed() && key.isEmpty()) {
        throw error(keyStart - 1, word + "{} needs a name between the braces");
      }
      if (key != null && (field == Filter.Field.ATTR || field == Filter.Field.ATTRS)) {
        for (String part : key.split("/", -1)) {
          if (part.equals("..")) {
            throw error(keyStart, "an attribute name must not contain \"..\"");
          }
        }
      }
      int opAt = pos;
      boolean equal;
      if (text.startsWith("==", pos)) {
        equal = true;
        pos += 2;
      } else if (text.startsWith("!=", pos)) {
        equal = false;
        pos += 2;
      } else {
        for (String op : List.of("+=", "-=", ":=", "=")) {
          if (text.startsWith(op, pos)) {
            throw error(
                opAt,
                "assignment \""
                    + op
                    + "\" is not supported: discovery rules only match, with == or !=");
          }
        }
        throw error(opAt, "expected == or != after " + word + " but found " + describe(opAt));
      }
      if (pos >= text.length() || text.charAt(pos) != '"') {
        throw error(pos, "expected a value in double quotes but found " + describe(pos));
      }
      int quote = pos;
      pos++;
      int valueStart = pos;
      while (pos < text.length() && text.charAt(pos) != '"') {
        char c = text.charAt(pos);
        if (!isValueChar(c)) {
          throw error(
              pos,
              "character "
                  + quoteChar(c)
                  + " is not allowed in a value (letters, digits, spaces and $ . _ * : ? [ ] - |"
                  + " \\ / % { } are)");
        }
        pos++;
      }
      if (pos >= text.length()) {
        throw error(quote, "unbalanced quote: the value opened here is never closed");
      }
      String value = text.substring(valueStart, pos);
      pos++;
      Optional<Pattern> regex = Optional.empty();
      if (Filter.byRegex(field, equal)) {
        try {
          regex = Optional.of(Pattern.compile(value));
        } catch (PatternSyntaxException e) {
          throw error(
              valueStart,
              "bad regular expression \"" + value + "\" for " + word + ": " + e.getDescription());
        }
      }
      return new Filter(field, key == null ? "" : key, equal, value, start + 1, regex);
    }

    private String describe(int at) {
      return at >= text.length() ? "the end of the rule" : quoteChar(text.charAt(at));
    }
  }

  private static String quoteChar(char c) {
    if (c < 32 || c == 127) {
      return String.format("U+%04X", (int) c);
    }
    return "'" + c + "'";
  }

  private static boolean isFieldChar(char c) {
    return (c >= 'A' && c <= 'Z') || c == '_';
  }

  private static boolean isAsciiAlnum(char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
  }

  private static boolean isValueChar(char c) {
    return isAsciiAlnum(c)
        || Character.getType(c) == Character.SPACE_SEPARATOR
        || VALUE_PUNCTUATION.indexOf(c) >= 0;
  }

  private static boolean isKeyChar(char c) {
    return isAsciiAlnum(c)
        || Character.getType(c) == Character.SPACE_SEPARATOR
        || KEY_PUNCTUATION.indexOf(c) >= 0;
  }
}
