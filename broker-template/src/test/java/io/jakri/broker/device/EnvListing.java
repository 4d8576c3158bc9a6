package io.jakri.broker.device;

import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.LinkedHashMap;
import java.util.Map;

/** Reads an {@code env | sort} listing from the test resources {@code /env/}. */
public final class EnvListing {
  private EnvListing() {}

  public static Map<String, String> load(String name) {
    try (InputStream in = EnvListing.class.getResourceAsStream("/env/" + name)) {
      if (in == null) {
        throw new IllegalArgumentException("no fixture " + name);
      }
      Map<String, String> env = new LinkedHashMap<>();
      for (String line : new String(in.readAllBytes(), StandardCharsets.UTF_8).split("\n")) {
        int eq = line.indexOf('=');
        if (eq > 0) {
          env.put(line.substring(0, eq), line.substring(eq + 1));
        }
      }
      return env;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
