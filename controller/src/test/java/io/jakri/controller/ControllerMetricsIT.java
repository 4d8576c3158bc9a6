package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.controller.metrics.ControllerMetrics;
import io.jakri.controller.metrics.MetricsServer;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * Akri's {@code akri_broker_pod_count}, scraped over HTTP from the controller's metrics port (the
 * packaged jar on the controller's ServiceAccount token, and a {@link MetricsServer} in this JVM).
 */
@ExtendWith(RealKube.class)
class ControllerMetricsIT {

  static final Duration WAIT = Duration.ofSeconds(20);

  RealCluster cluster;
  ExecutorService http;
  final HttpClient client = HttpClient.newHttpClient();

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "metrics");
    cluster.node("n1");
    cluster.node("n2");
    http = Executors.newSingleThreadExecutor();
  }

  @AfterEach
  void tearDown() {
    cluster.close();
    http.shutdownNow();
  }

  String get(MetricsServer server, String path) throws Exception {
    return client
        .send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + server.port() + path)).build(),
            HttpResponse.BodyHandlers.ofString())
        .body();
  }

  @Test
  void theJarServesMetricsOnTheMetricsPort(@TempDir Path tmp) throws Exception {
    int port;
    try (ServerSocket free = new ServerSocket(0)) {
      port = free.getLocalPort();
    }
    Configuration cam = cluster.podConfiguration("cam", "nginx:1");
    cluster.instance(cam, "cam-bbbbbb", false, "n1");
    Process controller =
        ControllerJar.start(
            cluster.kubeconfig(tmp.resolve("kubeconfig")),
            tmp.resolve("out"),
            tmp.resolve("out"),
            List.of(),
            "--namespace",
            cluster.ns,
            "--metrics-port",
            String.valueOf(port));
    try {
      URI metrics = URI.create("http://127.0.0.1:" + port + "/metrics");
      await()
          .atMost(Duration.ofSeconds(60))
          .ignoreExceptions()
          .untilAsserted(
              () ->
                  assertThat(
                          client
                              .send(
                                  HttpRequest.newBuilder(metrics).build(),
                                  HttpResponse.BodyHandlers.ofString())
                              .body())
                      .contains("akri_broker_pod_count{configuration=\"cam\",node=\"n1\"} 1.0"));
      controller.destroy();
      assertThat(controller.waitFor(30, TimeUnit.SECONDS)).isTrue();
      assertThat(controller.exitValue()).isZero();
      assertThat(Files.readString(tmp.resolve("out")))
          .as("the jar's log: no call refused")
          .doesNotContainIgnoringCase("forbidden");
    } finally {
      controller.destroyForcibly();
    }
  }

  @Test
  void brokerPodCountIsAkrisGaugeByConfigurationAndNode() throws Exception {
    Configuration cam = cluster.podConfiguration("cam", "nginx:1");
    Instance shared = cluster.instance(cam, "cam-aaaaaa", true, "n1", "n2");
    cluster.instance(cam, "cam-bbbbbb", false, "n1");
    Controller controller = cluster.start().controller();
    try (MetricsServer server =
        new MetricsServer(
            new InetSocketAddress("127.0.0.1", 0),
            new ControllerMetrics(controller::managedPods),
            controller::notReady,
            http)) {
      server.start();
      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(get(server, "/metrics"))
                      .contains("# TYPE akri_broker_pod_count gauge")
                      .contains("akri_broker_pod_count{configuration=\"cam\",node=\"n1\"} 2.0")
                      .contains("akri_broker_pod_count{configuration=\"cam\",node=\"n2\"} 1.0"));
      assertThat(get(server, "/readyz")).isEqualTo("ok\n");

      // n2 leaves the shared Instance: its broker goes, and so does the series.
      shared.getSpec().setNodes(List.of("n1"));
      cluster.client.resource(shared).inNamespace(cluster.ns).update();
      await()
          .atMost(WAIT)
          .untilAsserted(
              () ->
                  assertThat(get(server, "/metrics"))
                      .contains("akri_broker_pod_count{configuration=\"cam\",node=\"n1\"} 2.0")
                      .doesNotContain("node=\"n2\""));
    }
  }
}
