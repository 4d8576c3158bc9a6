package io.jakri.agent.validate;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.TestAgent;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@code java -jar jakri-agent.jar validate FILE...}: exit codes and what goes where. */
class ValidateCommandIT {

  static final Path JAR = Path.of("target", "jakri-agent.jar").toAbsolutePath();

  @TempDir Path tmp;

  private int run(Path... files) throws Exception {
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString(),
                "validate",
                "--plugins-dir",
                ValidatorIT.PLUGINS.toString()));
    for (Path f : files) {
      command.add(f.toString());
    }
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectOutput(tmp.resolve("stdout").toFile())
            .redirectError(tmp.resolve("stderr").toFile());
    builder.environment().remove("JAKRI_LOG_LEVEL");
    Process validate = builder.start();
    assertThat(validate.waitFor(60, TimeUnit.SECONDS)).isTrue();
    return validate.exitValue();
  }

  @Test
  void warningsAloneExitZeroAndStderrStaysEmpty() throws Exception {
    Path sim = tmp.resolve("sim.yaml");
    Files.writeString(sim, TestAgent.configuration("sim", "simulated", 1, "count: 1"));
    Path bacnet = tmp.resolve("bacnet.yaml");
    Files.writeString(bacnet, TestAgent.configuration("cams", "bacnet", 1, "unit: 1"));

    int code = run(sim, bacnet);

    assertThat(code).isZero();
    assertThat(Files.readString(tmp.resolve("stderr"))).isEmpty();
    assertThat(Files.readAllLines(tmp.resolve("stdout")))
        .contains(sim + ": configuration sim is valid")
        .anyMatch(l -> l.startsWith("warning: " + bacnet + ": spec.discoveryHandler.name: "));
  }

  @Test
  void aProblemExitsOneWithOneLineOnStderr() throws Exception {
    Path zero = tmp.resolve("zero.yaml");
    Files.writeString(zero, TestAgent.configuration("zero", "simulated", 0, "count: 1"));

    int code = run(zero);

    assertThat(code).isEqualTo(1);
    assertThat(Files.readAllLines(tmp.resolve("stderr")))
        .containsExactly(zero + ": spec.capacity must be at least 1 but is 0");
  }
}
