package io.jakri.agent.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.TestAgent;
import java.io.IOException;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code validate} reports what the agent's policies would refuse (classes outside the allowed
 * domains, another Configuration's class, another device plugin's resource) as problems, and
 * reserved or dropped env entries as warnings.
 */
class ValidatorPolicyIT {

  @TempDir Path tmp;

  record Outcome(int code, List<String> out, List<String> err) {}

  private Outcome validate(Validator validator, StringWriter out, StringWriter err, Path... files) {
    int code = validator.validate(List.of(files));
    return new Outcome(code, out.toString().lines().toList(), err.toString().lines().toList());
  }

  private Outcome validate(Path... files) {
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();
    return validate(
        new Validator(ValidatorIT.PLUGINS, new PrintWriter(out, true), new PrintWriter(err, true)),
        out,
        err,
        files);
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
  void aClassOutsideTheAllowedDomainsIsAProblem() throws IOException {
    Path file = file("gpu.yaml", simulated("gpu", "count: 1\nresourceName: nvidia.com/gpu"));

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + ": spec.discoveryHandler.discoveryDetails: class nvidia.com/gpu is not in a"
                + " domain this agent allows (example.com; see --class-domains)");
    assertThat(outcome.out()).noneMatch(l -> l.contains("is valid"));
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void anotherConfigurationsClassIsAProblem() throws IOException {
    Path file =
        file(
            "two.yaml",
            simulated("first", "count: 1\nresourceName: example.com/widget"),
            simulated("second", "count: 1\nresourceName: example.com/widget"),
            simulated("third", "count: 1\nresourceName: akri.sh/first"));

    Outcome outcome = validate(file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + " (document 2): spec.discoveryHandler.discoveryDetails: class"
                + " example.com/widget is also used by Configuration first ("
                + file
                + " (document 1)); a class belongs to one Configuration and the agent refuses"
                + " the later",
            file
                + " (document 3): spec.discoveryHandler.discoveryDetails: class akri.sh/first is"
                + " in the agent's own domain akri.sh, where a Configuration's devices may only"
                + " join akri.sh/third");
    assertThat(outcome.out()).contains(file + " (document 1): configuration first is valid");
    assertThat(outcome.code()).isEqualTo(1);
  }

  @Test
  void aResourceAnotherDevicePluginRegisteredIsAProblem() throws IOException {
    Path dp = Files.createDirectories(tmp.resolve("device-plugins"));
    Files.writeString(
        dp.resolve("kubelet_internal_checkpoint"),
        "{\"Data\":{\"PodDeviceEntries\":[],\"RegisteredDevices\":{\"example.com/gpu\":"
            + "[\"GPU-8d5e\"],\"example.com/widget\":[\"mine-8120fe-0\"]}},\"Checksum\":1}");
    Path file =
        file(
            "gpu.yaml",
            simulated("gpu", "count: 1\nresourceName: example.com/gpu"),
            simulated("mine", "count: 1\nresourceName: example.com/widget"));
    StringWriter out = new StringWriter();
    StringWriter err = new StringWriter();

    Outcome outcome =
        validate(
            new Validator(
                ValidatorIT.PLUGINS,
                Set.of("example.com"),
                Optional.of(dp),
                new PrintWriter(out, true),
                new PrintWriter(err, true)),
            out,
            err,
            file);

    assertThat(outcome.err())
        .containsExactly(
            file
                + " (document 1): spec.discoveryHandler.discoveryDetails: class example.com/gpu"
                + " is registered with the kubelet by another device plugin on this node (its"
                + " checkpoint); registering it would replace that plugin");
    assertThat(outcome.out()).contains(file + " (document 2): configuration mine is valid");
  }

  @Test
  void reservedAndDroppedEnvAreWarnings() throws IOException {
    Path file =
        file(
            "env.yaml",
            simulated("env", "count: 1\nproperties: {LD_PRELOAD: /tmp/evil.so}\nenvPrefix: LD")
                + "  brokerProperties:\n"
                + "    PATH: /tmp/evil\n"
                + "    \"A=B\": x\n"
                + "    NUL: \"a\\0b\"\n"
                + "    \"BASH_FUNC_x%%\": \"() { id; }\"\n"
                + "    BIG: "
                + "y".repeat(100_000)
                + "\n");

    Outcome outcome = validate(file);

    assertThat(outcome.err()).isEmpty();
    assertThat(outcome.code()).isZero();
    assertThat(outcome.out())
        .contains(
            "warning: "
                + file
                + ": spec.brokerProperties.PATH: reserved env name (it changes how programs in"
                + " every container given the device run); the agent refuses this Configuration"
                + " unless it runs with --allow-reserved-broker-env",
            "warning: "
                + file
                + ": spec.brokerProperties.\"A=B\" is not given to containers: the name is not an"
                + " env var name ([A-Za-z_][A-Za-z0-9_]*)",
            "warning: "
                + file
                + ": spec.brokerProperties.\"NUL\" is not given to containers: the value contains"
                + " a NUL character",
            "warning: "
                + file
                + ": spec.brokerProperties.\"BASH_FUNC_x%%\" is not given to containers: the name"
                + " is not an env var name ([A-Za-z_][A-Za-z0-9_]*)",
            "warning: "
                + file
                + ": spec.brokerProperties.\"BIG\" is not given to containers: the value is longer"
                + " than 4096 characters (100000)",
            "warning: "
                + file
                + ": spec.discoveryHandler.discoveryDetails: device property \"LD_PRELOAD\" is"
                + " not given to containers: the name is reserved (it would change how programs"
                + " in the container run)",
            "warning: "
                + file
                + ": spec.discoveryHandler.discoveryDetails: device env \"LD_<device id>\" is"
                + " not given to containers: the name is reserved (it would change how programs"
                + " in the container run)");
  }
}
