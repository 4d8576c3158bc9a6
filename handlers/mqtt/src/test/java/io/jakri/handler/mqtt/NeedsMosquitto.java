package io.jakri.handler.mqtt;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;

/**
 * {@link Mosquitto} for tests: a missing mosquitto skips the calling test, or fails it when {@code
 * CI=true} ({@code apt-get install -y mosquitto mosquitto-clients}).
 */
final class NeedsMosquitto {

  private NeedsMosquitto() {}

  /** {@link Mosquitto#start(Path)}, or skips. */
  static Mosquitto start(Path dir) throws IOException {
    return start(dir, "allow_anonymous true\n", "tcp", List.of());
  }

  /** {@link Mosquitto#start(Path, String, String, List)}, or skips. */
  static Mosquitto start(Path dir, String config, String scheme, List<String> pubArgs)
      throws IOException {
    try {
      return Mosquitto.start(dir, config, scheme, pubArgs);
    } catch (Mosquitto.Unavailable e) {
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(e.getMessage());
      }
      return Assumptions.abort(e.getMessage());
    }
  }
}
