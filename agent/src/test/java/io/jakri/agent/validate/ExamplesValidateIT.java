package io.jakri.agent.validate;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;

/** Every Configuration shipped under examples/ and broker-template/deploy passes `validate`. */
class ExamplesValidateIT {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();
  static final Path REPO = Path.of("..").toAbsolutePath().normalize();

  @Test
  void everyShippedConfigurationValidatesWithTheBundledHandlers() throws IOException {
    List<Path> configurations;
    try (Stream<Path> files =
        Stream.concat(
            Files.walk(REPO.resolve("examples")),
            Files.walk(REPO.resolve("broker-template").resolve("deploy")))) {
      configurations =
          files
              .filter(p -> p.toString().endsWith(".yaml"))
              .filter(p -> contains(p, "kind: Configuration"))
              .sorted()
              .toList();
    }
    assertThat(configurations).hasSizeGreaterThanOrEqualTo(5);
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    int code =
        new Validator(PLUGINS, new PrintWriter(out, true), new PrintWriter(err, true))
            .validate(configurations);

    assertThat(err.toString()).isEmpty();
    assertThat(code).as(out.toString()).isZero();
  }

  private static boolean contains(Path file, String text) {
    try {
      return Files.readString(file).contains(text);
    } catch (IOException e) {
      return false;
    }
  }
}
