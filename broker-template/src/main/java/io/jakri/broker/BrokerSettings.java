package io.jakri.broker;

import java.util.Map;
import java.util.Optional;

/**
 * The broker's own settings, from env.
 *
 * <p>{@value #PORT_VAR} is the HTTP port (default {@value #DEFAULT_PORT}; 0 = any free port). The
 * name deliberately does not end in {@code _PORT} alone after a Service name: Kubernetes injects
 * {@code <SERVICE>_PORT} for every Service in the namespace, so a name like {@code BROKER_PORT}
 * would be overwritten by a Service called {@code broker}.
 *
 * @param port the TCP port to listen on, 0..65535
 */
public record BrokerSettings(int port) {

  /** The env var holding the HTTP port. */
  public static final String PORT_VAR = "JAKRI_BROKER_HTTP_PORT";

  /** The port used when {@value #PORT_VAR} is not set. */
  public static final int DEFAULT_PORT = 8080;

  public BrokerSettings {
    if (port < 0 || port > 65535) {
      throw new IllegalArgumentException(PORT_VAR + " must be 0..65535");
    }
  }

  /**
   * Reads the settings from {@code env}.
   *
   * @throws IllegalArgumentException with a message naming the variable when a value is invalid
   */
  public static BrokerSettings fromEnv(Map<String, String> env) {
    Optional<String> raw = Optional.ofNullable(env.get(PORT_VAR)).map(String::strip);
    if (raw.isEmpty() || raw.get().isEmpty()) {
      return new BrokerSettings(DEFAULT_PORT);
    }
    String value = raw.get();
    if (!value.matches("[0-9]{1,5}") || Integer.parseInt(value) > 65535) {
      throw new IllegalArgumentException(
          PORT_VAR + " must be a port number 0..65535 (was " + value.length() + " characters)");
    }
    return new BrokerSettings(Integer.parseInt(value));
  }
}
