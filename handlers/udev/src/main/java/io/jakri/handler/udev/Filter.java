package io.jakri.handler.udev;

import com.google.re2j.Pattern;
import java.util.Objects;
import java.util.Optional;

/**
 * One {@code FIELD==/!="value"} match of a udev rule.
 *
 * @param field what is compared
 * @param key the attribute or property name of {@code ATTR}, {@code ATTRS} and {@code ENV}; empty
 *     for the other fields
 * @param equal {@code ==} (true) or {@code !=} (false)
 * @param value the text between the quotes
 * @param column where the filter starts in its rule, 1-based
 * @param regex the compiled value when this field and operator compare by regular expression (see
 *     {@link #byRegex()})
 */
record Filter(
    Field field, String key, boolean equal, String value, int column, Optional<Pattern> regex) {

  /** The fields of Akri's rule language. */
  enum Field {
    DEVPATH(false, false),
    KERNEL(false, false),
    KERNELS(false, true),
    SUBSYSTEM(false, false),
    SUBSYSTEMS(false, true),
    DRIVER(false, false),
    DRIVERS(false, true),
    ATTR(true, false),
    ATTRS(true, true),
    ENV(true, false),
    TAG(false, false),
    TAGS(false, true);

    private final boolean keyed;
    private final boolean ancestors;

    Field(boolean keyed, boolean ancestors) {
      this.keyed = keyed;
      this.ancestors = ancestors;
    }

    /** Whether the field takes a {@code {key}}. */
    boolean keyed() {
      return keyed;
    }

    /** Whether the field also looks at the device's ancestors (the plural fields). */
    boolean ancestors() {
      return ancestors;
    }
  }

  Filter {
    Objects.requireNonNull(field, "field");
    Objects.requireNonNull(key, "key");
    Objects.requireNonNull(value, "value");
    regex = regex == null ? Optional.empty() : regex;
  }

  /**
   * Whether Akri compares this filter with a whole-string regular expression rather than handing it
   * to libudev's enumerator. The enumerator takes {@code ==} on DEVPATH, KERNEL, SUBSYSTEM, ATTR,
   * ENV and TAG and {@code !=} on SUBSYSTEM and ATTR (shell wildcards; TAG exact); everything else
   * is a regular expression that must match the whole value.
   */
  static boolean byRegex(Field field, boolean equal) {
    if (equal) {
      return switch (field) {
        case DEVPATH, KERNEL, SUBSYSTEM, ATTR, ENV, TAG -> false;
        default -> true;
      };
    }
    return !(field == Field.SUBSYSTEM || field == Field.ATTR);
  }

  boolean byRegex() {
    return byRegex(field, equal);
  }

  /** Akri's whole-string test: the leftmost-first match must span the whole value. */
  boolean regexMatches(String text) {
    com.google.re2j.Matcher m = regex.orElseThrow().matcher(text);
    return m.find() && m.start() == 0 && m.end() == text.length();
  }

  @Override
  public String toString() {
    return field
        + (field.keyed() ? "{" + key + "}" : "")
        + (equal ? "==" : "!=")
        + "\""
        + value
        + "\"";
  }
}
