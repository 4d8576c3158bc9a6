package io.jakri.agent.validate;

import static io.jakri.agent.configuration.InstanceObjectsValidationTest.SEVERAL;
import static io.jakri.agent.configuration.InstanceObjectsValidationTest.SEVERAL_PROBLEMS;
import static io.jakri.agent.configuration.InstanceObjectsValidationTest.VALID;
import static io.jakri.agent.configuration.InstanceObjectsValidationTest.configuration;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code spec.instanceObjects} through {@code validate} (each problem one line on stderr, with its
 * path, line and column) and the admission webhook's {@link ConfigurationReview} (the same
 * problems, without positions). No handler plugins: a unit test, not an IT.
 */
class ValidatorInstanceObjectsTest {

  @TempDir Path tmp;

  record Outcome(int code, List<String> out, List<String> err) {}

  private Outcome validate(Path file) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        new Validator(
                tmp.resolve("plugins"), new PrintWriter(out, true), new PrintWriter(err, true))
            .validate(List.of(file));
    return new Outcome(code, out.toString().lines().toList(), err.toString().lines().toList());
  }

  private Path file(String name, String text) throws IOException {
    Path file = tmp.resolve(name);
    Files.writeString(file, text);
    return file;
  }

  @Test
  void aConfigurationWithTwoValidTemplatesIsValid() throws IOException {
    Path file = file("ok.yaml", VALID);

    Outcome outcome = validate(file);

    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.out())
        .containsExactly(
            "warning: "
                + file
                + ": spec.discoveryHandler.name: handler \"debugEcho\" is not installed (no"
                + " plugins directory "
                + tmp.resolve("plugins")
                + "; see --plugins-dir); discoveryDetails not checked",
            file + ": configuration objects is valid (discoveryDetails not checked)");
    assertThat(outcome.code()).isZero();
  }

  @Test
  void everyProblemIsOneLineWithItsPathLineAndColumn() throws IOException {
    Path file = file("bad.yaml", SEVERAL);

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactlyElementsOf(SEVERAL_PROBLEMS.stream().map(p -> file + ": " + p).toList());
    assertThat(outcome.out()).isEmpty();
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aStringEntryIsOneProblem() throws IOException {
    Path file = file("string.yaml", configuration("instanceObjects:\n  - \"{{INSTANCE_NAME}}\"\n"));

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + ": spec.instanceObjects[0] (line 10, column 7): must be an object (a Kubernetes"
                + " manifest)");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void theWebhookRefusesWithTheSameProblemsWithoutPositions() {
    try (ConfigurationReview review =
        new ConfigurationReview(tmp.resolve("plugins"), Set.of(), Duration.ofSeconds(10))) {
      ConfigurationReview.Verdict bad =
          review.review("configuration default/objects", new Yaml().load(SEVERAL));
      ConfigurationReview.Verdict ok =
          review.review("configuration default/objects", new Yaml().load(VALID));

      assertThat(bad.problems())
          .containsExactlyElementsOf(
              SEVERAL_PROBLEMS.stream()
                  .map(
                      p ->
                          "configuration default/objects: "
                              + p.replaceAll(" \\(line \\d+, column \\d+\\)", ""))
                  .toList());
      assertThat(ok.allowed()).isTrue();
      assertThat(ok.warnings())
          .singleElement()
          .asString()
          .contains("handler \"debugEcho\" is not installed beside the webhook");
    }
  }
}
