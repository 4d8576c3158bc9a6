package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged controller jar against a mock API server: {@code --log-format json} really switches
 * logback, although {@code Main} is loaded (and logback may initialise) before the flag is parsed.
 */
class JsonLogIT {

  static final Path JAR = Path.of("target", "jakri-controller.jar").toAbsolutePath();

  @TempDir Path tmp;

  @Test
  void logFormatJsonPrintsOneJsonObjectPerLineOnStdout() throws Exception {
    try (MockCluster cluster = new MockCluster()) {
      ProcessBuilder builder =
          new ProcessBuilder(
                  Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                  "-Dkubernetes.master=" + cluster.client.getMasterUrl(),
                  "-Dkubernetes.auth.tryKubeConfig=false",
                  "-Dkubernetes.auth.tryServiceAccount=false",
                  "-jar",
                  JAR.toString(),
                  "--namespace",
                  MockCluster.NS,
                  "--log-format",
                  "json")
              .redirectOutput(tmp.resolve("stdout").toFile())
              .redirectError(tmp.resolve("stderr").toFile());
      builder.environment().remove("JAKRI_LOG_FORMAT");
      Process controller = builder.start();
      try {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> Files.readString(tmp.resolve("stdout")).contains("controller started"));
        controller.destroy(); // SIGTERM: Main logs the API requests it made
        assertThat(controller.waitFor(30, TimeUnit.SECONDS)).isTrue();
      } finally {
        controller.destroyForcibly();
      }
    }

    List<String> lines =
        Files.readAllLines(tmp.resolve("stdout")).stream().filter(l -> !l.isBlank()).toList();
    List<JsonNode> events = new ArrayList<>();
    ObjectMapper json = new ObjectMapper();
    for (String line : lines) {
      JsonNode event = json.readTree(line);
      assertThat(event.isObject()).as(line).isTrue();
      for (String field : List.of("timestamp", "level", "logger", "thread", "message")) {
        assertThat(event.path(field).asText()).as(field + " in " + line).isNotBlank();
      }
      events.add(event);
    }
    assertThat(events)
        .anySatisfy(
            e ->
                assertThat(e.path("message").asText())
                    .isEqualTo("controller started in namespace test with 4 worker(s)"))
        .anySatisfy(
            e -> {
              assertThat(e.path("logger").asText()).isEqualTo(Main.class.getName());
              assertThat(e.path("message").asText()).startsWith("stopping; ");
            });
  }
}
