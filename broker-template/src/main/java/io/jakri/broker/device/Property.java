package io.jakri.broker.device;

import java.util.Objects;
import java.util.regex.Pattern;

/**
 * One device property as a container received it: an env var name without the contract's prefix or
 * hash suffix, and its value.
 *
 * <p>Values come from device discovery (for zeroconf, from the network): they are bounded but
 * otherwise arbitrary text, so escape them wherever they are shown.
 *
 * @param name a POSIX env var name, at most {@value DeviceEnv#MAX_NAME_LENGTH} characters
 * @param value at most {@value DeviceEnv#MAX_VALUE_LENGTH} characters, no NUL
 */
public record Property(String name, String value) {

  private static final Pattern ENV_NAME = Pattern.compile("[A-Za-z_][A-Za-z0-9_]*");

  public Property {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(value, "value");
    if (!isEnvName(name)) {
      throw new IllegalArgumentException("not an env var name of acceptable length");
    }
    if (!isAcceptableValue(value)) {
      throw new IllegalArgumentException("value too long or holding NUL");
    }
  }

  /** Whether {@code name} is a POSIX env var name of at most {@link DeviceEnv#MAX_NAME_LENGTH}. */
  public static boolean isEnvName(String name) {
    return name != null
        && !name.isEmpty()
        && name.length() <= DeviceEnv.MAX_NAME_LENGTH
        && ENV_NAME.matcher(name).matches();
  }

  /** Whether {@code value} is short enough and free of NUL. */
  public static boolean isAcceptableValue(String value) {
    return value != null && value.length() <= DeviceEnv.MAX_VALUE_LENGTH && value.indexOf('\0') < 0;
  }
}
