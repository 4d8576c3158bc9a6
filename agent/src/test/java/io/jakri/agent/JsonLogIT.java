package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged agent jar's log format: {@code --log-format json} (or {@code JAKRI_LOG_FORMAT=json})
 * really switches logback, which initialises before the flag is parsed could matter.
 */
class JsonLogIT {

  static final Path JAR = Path.of("target", "jakri-agent.jar").toAbsolutePath();
  static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;

  /** Runs a standalone agent with the emulator until it logged its simulated Instance. */
  private void runAgent(List<String> extraArgs, Map<String, String> env, String expected)
      throws Exception {
    Path config = tmp.resolve("config");
    Files.createDirectories(config);
    Files.writeString(
        config.resolve("sim.yaml"), TestAgent.configuration("sim", "simulated", 1, "count: 1"));
    List<String> command =
        new ArrayList<>(
            List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-jar",
                JAR.toString(),
                "--standalone",
                "--config",
                config.toString(),
                "--emulate-kubelet",
                "--device-plugin-dir",
                tmp.resolve("dp").toString(),
                "--node-name",
                "node-a",
                "--plugins-dir",
                TestAgent.PLUGINS.toString(),
                "--discovery-handlers-dir",
                tmp.resolve("akri").toString()));
    command.addAll(extraArgs);
    ProcessBuilder builder =
        new ProcessBuilder(command)
            .redirectOutput(tmp.resolve("stdout").toFile())
            .redirectError(tmp.resolve("stderr").toFile());
    builder.environment().remove("JAKRI_LOG_FORMAT");
    builder.environment().putAll(env);
    Process agent = builder.start();
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(() -> Files.readString(tmp.resolve(expected)).contains("discovered as instance"));
      agent.destroy(); // SIGTERM: the agent logs its shutdown too
      assertThat(agent.waitFor(30, TimeUnit.SECONDS)).isTrue();
    } finally {
      agent.destroyForcibly();
    }
  }

  private List<String> lines(String file) throws IOException {
    return Files.readAllLines(tmp.resolve(file)).stream().filter(l -> !l.isBlank()).toList();
  }

  private void assertEveryStdoutLineIsAJsonLogEvent() throws IOException {
    List<String> lines = lines("stdout");
    assertThat(lines).hasSizeGreaterThanOrEqualTo(3);
    List<JsonNode> events = new ArrayList<>();
    for (String line : lines) {
      JsonNode event = JSON.readTree(line);
      assertThat(event.isObject()).as(line).isTrue();
      for (String field : List.of("timestamp", "level", "logger", "thread", "message")) {
        assertThat(event.path(field).asText()).as(field + " in " + line).isNotBlank();
      }
      assertThat(event.has("JAKRI_LOG_FORMAT")).as(line).isFalse();
      assertThat(event.path("node").asText()).as("node in " + line).isEqualTo("node-a");
      events.add(event);
    }
    assertThat(events)
        .anySatisfy(
            e -> {
              assertThat(e.path("level").asText()).isEqualTo("INFO");
              assertThat(e.path("message").asText())
                  .startsWith("configuration sim: device ")
                  .contains("discovered as instance sim-");
            });
    assertThat(events)
        .anySatisfy(
            e -> assertThat(e.path("message").asText()).startsWith("jakri agent stopped in "));
    // Nothing went to stderr in the text format.
    assertThat(lines("stderr")).noneMatch(l -> l.contains(" INFO "));
  }

  @Test
  void logFormatJsonFlagPrintsOneJsonObjectPerLineOnStdout() throws Exception {
    runAgent(List.of("--log-format", "json"), Map.of(), "stdout");

    assertEveryStdoutLineIsAJsonLogEvent();
  }

  @Test
  void jakriLogFormatEnvVarSelectsJsonWithoutTheFlag() throws Exception {
    runAgent(List.of(), Map.of("JAKRI_LOG_FORMAT", "json"), "stdout");

    assertEveryStdoutLineIsAJsonLogEvent();
  }

  @Test
  void textLinesOnStderrByDefault() throws Exception {
    runAgent(List.of(), Map.of(), "stderr");

    assertThat(lines("stdout")).isEmpty();
    assertThat(lines("stderr"))
        .anySatisfy(l -> assertThat(l).matches("\\d\\d:\\d\\d:\\d\\d\\.\\d{3} INFO .*"))
        .noneMatch(l -> l.startsWith("{"));
  }
}
