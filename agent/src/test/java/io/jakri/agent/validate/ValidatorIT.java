package io.jakri.agent.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.TestAgent;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * One test per kind of {@code validate} message, with the bundled handler plugins of {@code
 * target/plugins} (hence an IT: they are copied there in {@code package}).
 */
class ValidatorIT {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  @TempDir Path tmp;

  record Outcome(int code, List<String> out, List<String> err) {}

  private Outcome validateWith(Path pluginsDir, Path... files) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    int code =
        new Validator(pluginsDir, new PrintWriter(out, true), new PrintWriter(err, true))
            .validate(List.of(files));
    return new Outcome(code, out.toString().lines().toList(), err.toString().lines().toList());
  }

  private Outcome validate(Path... files) {
    return validateWith(PLUGINS, files);
  }

  private Path file(String name, String... documents) throws IOException {
    Path file = tmp.resolve(name);
    Files.writeString(file, String.join("---\n", documents));
    return file;
  }

  private static String simulated(String name, String details) {
    return TestAgent.configuration(name, "simulated", 1, details);
  }

  @Test
  void aValidConfigurationGetsItsVerdictAndExitZero() throws IOException {
    Path file = file("sim.yaml", simulated("sim", "count: 2"));

    Outcome outcome = validate(file);

    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.out()).containsExactly(file + ": configuration sim is valid");
    assertThat(outcome.code()).isZero();
  }

  @Test
  void aHandlerThatIsNotInstalledIsAWarningNamingTheInstalledOnesAndKeepsExitZero()
      throws IOException {
    Path file = file("bacnet.yaml", TestAgent.configuration("cams", "bacnet", 1, "unit: 1"));

    Outcome outcome = validate(file);

    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.out())
        .containsExactly(
            "warning: "
                + file
                + ": spec.discoveryHandler.name: handler \"bacnet\" is not installed (installed in "
                + PLUGINS
                + ": coap, debugEcho, modbus, mqtt, onvif, opcua, simulated, static, udev,"
                + " zeroconf); discoveryDetails not checked",
            file + ": configuration cams is valid (discoveryDetails not checked)");
    assertThat(outcome.code()).isZero();
  }

  @Test
  void theHandlersCheckRunsEvenWhenTheDocumentHasOtherProblems() throws IOException {
    Path file =
        file(
            "two.yaml",
            TestAgent.configuration("two", "debugEcho", 1, "descriptions: 7")
                + "  brokerSpec:\n    brokerPodSpec: {hostNetwork: true}\n");

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + ": spec.brokerSpec.brokerPodSpec.containers is required: a Pod runs at least one"
                + " container",
            file
                + ": spec.discoveryHandler.discoveryDetails: descriptions must be a list but is"
                + " integer 7");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aMissingPluginsDirectoryIsNamedInTheWarning() throws IOException {
    Path file = file("sim.yaml", simulated("sim", "count: 2"));
    Path nowhere = tmp.resolve("no-plugins");

    Outcome outcome = validateWith(nowhere, file);

    assertThat(outcome.out())
        .first()
        .isEqualTo(
            "warning: "
                + file
                + ": spec.discoveryHandler.name: handler \"simulated\" is not installed (no"
                + " plugins directory "
                + nowhere
                + "; see --plugins-dir); discoveryDetails not checked");
    assertThat(outcome.code()).isZero();
  }

  @Test
  void aHandlersProblemPointsAtFileDocumentAndField() throws IOException {
    Path file =
        file(
            "two.yaml",
            simulated("good", "count: 1"),
            simulated("bad", "count: 1\nresourceName: Example.com/Not A Name"));

    Outcome outcome = validate(file);

    assertThat(outcome.out()).containsExactly(file + " (document 1): configuration good is valid");
    assertThat(outcome.err()).hasSize(1);
    assertThat(outcome.err().get(0))
        .startsWith(
            file
                + " (document 2): spec.discoveryHandler.discoveryDetails: resourceName"
                + " \"Example.com/Not A Name\" ");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aHandlersWarningPointsAtTheFieldAndKeepsExitZero() throws IOException {
    Path file = file("sim.yaml", simulated("sim", "count: 1\ncolour: blue"));

    Outcome outcome = validate(file);

    assertThat(outcome.out())
        .contains(
            "warning: "
                + file
                + ": spec.discoveryHandler.discoveryDetails: colour is not a known field;"
                + " ignored");
    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.code()).isZero();
  }

  @Test
  void aStructuralProblemNamesTheField() throws IOException {
    Path file = file("zero.yaml", TestAgent.configuration("zero", "simulated", 0, "count: 1"));

    Outcome outcome = validate(file);

    assertThat(outcome.err()).containsExactly(file + ": spec.capacity must be at least 1 but is 0");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aNameThatWouldMakeAnInvalidResourceNameIsRefused() throws IOException {
    String name = "a".repeat(57);
    Path file = file("long.yaml", simulated(name, "count: 1"));

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + ": metadata.name \""
                + name
                + "\" is longer than 56 characters: akri.sh/<name>-<hash> would not be a valid"
                + " resource name");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void yamlBeyondTheSafetyLimitsIsRefusedWithOneMessage() throws IOException {
    StringBuilder laughs = new StringBuilder("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
    for (char c = 'b'; c <= 'm'; c++) {
      char p = (char) (c - 1);
      laughs
          .append(c)
          .append(": &")
          .append(c)
          .append(" [*")
          .append(p)
          .append(", *")
          .append(p)
          .append(", *")
          .append(p)
          .append("]\n");
    }
    Path file = file("laughs.yaml", laughs.toString());

    Outcome outcome = validate(file);

    assertThat(outcome.err()).hasSize(1);
    assertThat(outcome.err().get(0)).startsWith(file + ": invalid YAML: ");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void anUnreadableFileIsAProblem() {
    Path missing = tmp.resolve("missing.yaml");

    Outcome outcome = validate(missing);

    assertThat(outcome.err()).hasSize(1);
    assertThat(outcome.err().get(0)).startsWith(missing + ": cannot be read: ");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aNameUsedTwiceIsAWarning() throws IOException {
    Path first = file("a.yaml", simulated("sim", "count: 1"));
    Path second = file("b.yaml", simulated("sim", "count: 2"));

    Outcome outcome = validate(first, second);

    assertThat(outcome.out())
        .contains(
            "warning: "
                + second
                + ": metadata.name: \"sim\" is also the name of the Configuration in "
                + first
                + "; applied to one namespace, the later replaces the earlier");
    assertThat(outcome.code()).isZero();
  }

  @Test
  void akrisOwnConfigurationsValidateWithTheBundledHandlers() throws Exception {
    Path akri =
        Path.of(ValidatorIT.class.getResource("/validate/akri-configurations.yaml").toURI());

    Outcome outcome = validate(akri);

    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.out())
        .contains(akri + " (document 1): configuration akri-debug-echo is valid")
        .contains(akri + " (document 2): configuration akri-udev is valid")
        .contains(akri + " (document 3): configuration akri-onvif is valid")
        .contains(akri + " (document 4): configuration akri-opcua is valid")
        .noneMatch(l -> l.startsWith("warning: "));
    assertThat(outcome.code()).isZero();
  }

  @Test
  void aHandlerWhoseValidateHangsOrThrowsIsReportedAndTheOtherFilesAreStillChecked()
      throws IOException {
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    io.jakri.agent.PluginJars.plugin(
        plugins.resolve("faults.jar"),
        "faults",
        ">=0.1.0",
        List.of(
            io.jakri.agent.testplugins.MisbehavingHandlers.ValidateHanging.class,
            io.jakri.agent.testplugins.MisbehavingHandlers.ValidateThrowing.class));
    Files.copy(PLUGINS.resolve("jakri-handler-simulated.jar"), plugins.resolve("sim.jar"));
    Path hanging = file("hang.yaml", TestAgent.configuration("hang", "validate-hanger", 1, "x: 1"));
    Path throwing =
        file("throw.yaml", TestAgent.configuration("throw", "validate-thrower", 1, "x: 1"));
    Path fine = file("sim.yaml", simulated("sim", "count: 2"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    int code =
        new Validator(
                plugins,
                io.jakri.agent.Safeguards.DEFAULT_CLASS_DOMAINS,
                java.util.Optional.empty(),
                new PrintWriter(out, true),
                new PrintWriter(err, true),
                java.time.Duration.ofMillis(500))
            .validate(List.of(hanging, throwing, fine));

    assertThat(err.toString().lines())
        .containsExactly(
            hanging
                + ": "
                + Validator.DETAILS
                + ": handler \"validate-hanger\" did not answer within 500ms while checking them"
                + " (the handler blocks; the agent abandons such a call too)",
            throwing
                + ": "
                + Validator.DETAILS
                + ": handler \"validate-thrower\" failed while checking them:"
                + " java.lang.IllegalStateException: validate exploded");
    assertThat(out.toString().lines()).contains(fine + ": configuration sim is valid");
    assertThat(code).isEqualTo(1);
  }
}
