package io.jakri.logging;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import picocli.CommandLine;

/**
 * Durations the way the flags of both binaries take and print them: {@code 500ms}, {@code 60s},
 * {@code 5m}, {@code 1h}, a bare number of seconds, or ISO-8601 ({@code PT5M}). Pure functions.
 */
public final class DurationText {
  private static final Pattern UNITS = Pattern.compile("([+-]?\\d+)(ms|s|m|h)?");

  private DurationText() {}

  /** E.g. {@code 60s} for one minute, {@code 5m}, {@code 1h}, {@code 250ms}. */
  public static String of(Duration d) {
    if (d.toNanos() % 1_000_000_000L != 0) {
      return d.toMillis() + "ms";
    }
    long seconds = d.getSeconds();
    if (seconds != 0 && seconds % 3600 == 0) {
      return seconds / 3600 + "h";
    }
    if (seconds >= 120 && seconds % 60 == 0) {
      return seconds / 60 + "m";
    }
    return seconds + "s";
  }

  /**
   * Parses {@code 250ms}, {@code 60s}, {@code 2m}, {@code 1h}, {@code 90} (seconds) or ISO-8601
   * ({@code PT1M}, {@code P1D}), case-insensitive, surrounding blanks ignored.
   *
   * @throws IllegalArgumentException naming the value when it is none of these
   */
  public static Duration parse(String value) {
    String v = value.strip().toLowerCase(Locale.ROOT);
    try {
      if (v.startsWith("p") || v.startsWith("-p")) {
        return Duration.parse(v.toUpperCase(Locale.ROOT));
      }
      Matcher m = UNITS.matcher(v);
      if (m.matches()) {
        long n = Long.parseLong(m.group(1));
        String unit = m.group(2) == null ? "s" : m.group(2);
        return switch (unit) {
          case "ms" -> Duration.ofMillis(n);
          case "s" -> Duration.ofSeconds(n);
          case "m" -> Duration.ofMinutes(n);
          default -> Duration.ofHours(n);
        };
      }
    } catch (DateTimeParseException | ArithmeticException | NumberFormatException e) {
      // the message below says what is accepted
    }
    throw new IllegalArgumentException(
        "'" + value + "' is not a duration (use e.g. 60s, 2m, 500ms)");
  }

  /**
   * The picocli converter of every duration flag: {@link #parse}, and a negative duration is
   * refused. Its messages name the value and what to use instead.
   */
  public static final class Converter implements CommandLine.ITypeConverter<Duration> {
    @Override
    public Duration convert(String value) {
      Duration d;
      try {
        d = parse(value);
      } catch (IllegalArgumentException e) {
        throw new CommandLine.TypeConversionException(e.getMessage());
      }
      if (d.isNegative()) {
        throw new CommandLine.TypeConversionException(
            "'" + value + "' is negative (use 0 or more, e.g. 60s, 2m, 500ms)");
      }
      return d;
    }
  }
}
