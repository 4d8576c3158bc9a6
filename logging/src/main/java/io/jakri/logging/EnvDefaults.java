package io.jakri.logging;

import java.util.Locale;
import java.util.function.UnaryOperator;
import picocli.CommandLine;

/**
 * Flag defaults from the environment, for both binaries: {@code --foo-bar} reads {@code
 * JAKRI_FOO_BAR}; unset or empty falls back to the option's own {@code defaultValue}. Use as a
 * command's {@code defaultValueProvider}.
 */
public final class EnvDefaults implements CommandLine.IDefaultValueProvider {

  private final UnaryOperator<String> env;

  /** Reads the process environment. */
  public EnvDefaults() {
    this(System::getenv);
  }

  /** Reads {@code env} (a test's map) instead of the process environment. */
  public EnvDefaults(UnaryOperator<String> env) {
    this.env = env;
  }

  /** The env var an option reads: {@code --foo-bar} → {@code JAKRI_FOO_BAR}. */
  public static String variable(String longestName) {
    return "JAKRI_"
        + longestName.replaceFirst("^--", "").toUpperCase(Locale.ROOT).replace('-', '_');
  }

  @Override
  public String defaultValue(CommandLine.Model.ArgSpec argSpec) {
    if (!(argSpec instanceof CommandLine.Model.OptionSpec option)) {
      return null;
    }
    String value = env.apply(variable(option.longestName()));
    return value == null || value.isEmpty() ? null : value;
  }
}
