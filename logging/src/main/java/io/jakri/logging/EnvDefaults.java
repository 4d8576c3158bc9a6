package io.jakri.logging;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.function.UnaryOperator;
import picocli.CommandLine;

/**
 * Flag defaults from the environment, for both binaries: {@code --foo-bar} reads {@code
 * JAKRI_FOO_BAR}; unset or empty falls back to the option's own {@code defaultValue}. Use as a
 * command's {@code defaultValueProvider}.
 *
 * <p>A command may also name Akri's env var of a flag (e.g. {@code --metrics-port} reads Akri's
 * {@code METRICS_PORT}): it is read only when jakri's own {@code JAKRI_...} is unset or empty, and
 * {@link #akriNamesUsed()} says which were, so the command can log it once its log is set up.
 */
public final class EnvDefaults implements CommandLine.IDefaultValueProvider {

  private final UnaryOperator<String> env;
  private final Map<String, String> akriNames;

  /** Flag to the Akri env var it took its value from. */
  private final Map<String, String> akriNamesUsed = new TreeMap<>();

  /** Reads the process environment. */
  public EnvDefaults() {
    this(System::getenv);
  }

  /** Reads {@code env} (a test's map) instead of the process environment. */
  public EnvDefaults(UnaryOperator<String> env) {
    this(env, Map.of());
  }

  /**
   * Reads {@code env}, and for the options named in {@code akriNames} (longest option name, e.g.
   * {@code --node-name}, to Akri's env var, e.g. {@code AGENT_NODE_NAME}) also Akri's var when
   * jakri's is unset.
   */
  public EnvDefaults(UnaryOperator<String> env, Map<String, String> akriNames) {
    this.env = env;
    this.akriNames = Map.copyOf(akriNames);
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
    if (value != null && !value.isEmpty()) {
      return value;
    }
    String akri = akriNames.get(option.longestName());
    if (akri == null) {
      return null;
    }
    String akriValue = env.apply(akri);
    if (akriValue == null || akriValue.isEmpty()) {
      return null;
    }
    synchronized (akriNamesUsed) {
      akriNamesUsed.put(option.longestName(), akri);
    }
    return akriValue;
  }

  /**
   * One line per Akri env var a flag took its value from, e.g. {@code "--metrics-port from Akri's
   * env METRICS_PORT (JAKRI_METRICS_PORT is not set; it would win)"}, sorted; empty when none was.
   * Flags given on the command line ({@code parsed}) are left out: their value is the flag's.
   */
  public List<String> akriNamesUsed(CommandLine.ParseResult parsed) {
    List<String> lines = new ArrayList<>();
    synchronized (akriNamesUsed) {
      akriNamesUsed.forEach(
          (flag, akri) -> {
            if (!parsed.hasMatchedOption(flag)) {
              lines.add(
                  flag
                      + " from Akri's env "
                      + akri
                      + " ("
                      + variable(flag)
                      + " is not set; it would win)");
            }
          });
    }
    return lines;
  }
}
