package io.jakri.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.TestAgent;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsIT {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  @TempDir Path tmp;
  final HttpClient http = HttpClient.newHttpClient();

  private Agent start(boolean emulate) throws Exception {
    Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        tmp.resolve("config").resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 3\nidPrefix: dev\n"));
    return Agent.start(
        new AgentOptions(
                "n1",
                true,
                Optional.of(tmp.resolve("config")),
                emulate,
                tmp.resolve("device-plugins"),
                tmp.resolve("pod-resources").resolve("kubelet.sock"),
                PLUGINS,
                Duration.ofSeconds(30))
            .withMetricsPort(0));
  }

  private HttpResponse<String> get(Agent agent, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + agent.healthPort().orElseThrow() + path))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void metricsDescribeInstancesRegistrationsAndTheJvm() throws Exception {
    try (Agent agent = start(true)) {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                String body = get(agent, "/metrics").body();
                assertThat(body)
                    .contains("jakri_instances{configuration=\"sim\",node=\"n1\"} 3.0")
                    .contains("jakri_resources_served 4.0")
                    .contains("jakri_configurations{state=\"DISCOVERING\"} 1.0")
                    .contains("jakri_plugin_load_failures 0.0")
                    .contains("jakri_reclaimed_slots_total 0.0")
                    .contains("jvm_threads_live_threads");
                assertThat(counter(body, "jakri_registrations_total")).isGreaterThanOrEqualTo(4);
              });
      assertThat(get(agent, "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(agent, "/readyz").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void notReadyWhileTheKubeletIsUnreachableButHealthy() throws Exception {
    try (Agent agent = start(false)) {
      HttpResponse<String> ready = get(agent, "/readyz");
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.body()).contains("kubelet socket not found");
      assertThat(get(agent, "/healthz").statusCode()).isEqualTo(200);
    }
  }

  private static double counter(String body, String name) {
    return body.lines()
        .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }
}
