package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged controller jar against the real API server (on its ServiceAccount's token): {@code
 * --log-format json} really switches logback, although {@code Main} is loaded (and logback may
 * initialise) before the flag is parsed.
 */
@ExtendWith(RealKube.class)
class JsonLogIT {

  @TempDir Path tmp;
  String namespace;

  @Test
  void logFormatJsonPrintsOneJsonObjectPerLineOnStdout(RealApiServer api) throws Exception {
    try (RealCluster cluster = new RealCluster(api, "json")) {
      Process controller =
          ControllerJar.start(
              cluster.kubeconfig(tmp.resolve("kubeconfig")),
              tmp.resolve("stdout"),
              tmp.resolve("stderr"),
              List.of(),
              "--namespace",
              cluster.ns,
              "--log-format",
              "json");
      try {
        await()
            .atMost(Duration.ofSeconds(60))
            .until(() -> Files.readString(tmp.resolve("stdout")).contains("controller started"));
        controller.destroy(); // SIGTERM: Main logs the API requests it made
        assertThat(controller.waitFor(30, TimeUnit.SECONDS)).isTrue();
      } finally {
        controller.destroyForcibly();
      }
      namespace = cluster.ns;
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
                    .isEqualTo(
                        "controller started in namespace " + namespace + " with 4 worker(s)"))
        .anySatisfy(
            e -> {
              assertThat(e.path("logger").asText()).isEqualTo(Main.class.getName());
              assertThat(e.path("message").asText()).startsWith("stopping; ");
            });
  }
}
