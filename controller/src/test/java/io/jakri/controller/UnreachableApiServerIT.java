package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.testing.kube.FreePorts;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.io.IOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The packaged controller with a kubeconfig it cannot use yet (issue 26 item 4): it keeps running,
 * logs one WARN line per failed attempt (no stack trace), answers {@code /readyz} with 503 and the
 * reason, and becomes ready once the API server answers. The unreachable server is a port where
 * nothing listens that later forwards to the shared real API server (so the shared one is never
 * stopped); the wrong CA is a certificate made for the test.
 */
@ExtendWith(RealKube.class)
class UnreachableApiServerIT {

  static final String RETRYING = "list/watch failed, retrying";

  @TempDir Path tmp;
  RealCluster cluster;
  Process controller;
  final HttpClient http = HttpClient.newHttpClient();

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "late");
  }

  @AfterEach
  void tearDown() {
    if (controller != null) {
      controller.destroyForcibly();
    }
    cluster.close();
  }

  @Test
  void anUnreachableServerIsRetriedWithOneLinePerAttemptAndReadinessSaysWhyUntilItAnswers()
      throws Exception {
    int[] ports = FreePorts.take(2);
    int port = ports[0];
    int metrics = ports[1];
    Path kubeconfig =
        rewrite(
            cluster.kubeconfig(tmp.resolve("real")),
            cluster.api.url(),
            "https://127.0.0.1:" + port);
    controller = start(kubeconfig, metrics);

    String unreachable = "cannot reach the API server https://127.0.0.1:" + port;
    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(readyz(metrics))
                  .isEqualTo("503 not ready: " + unreachable + "/: Connection refused\n");
              assertThat(out()).contains(unreachable);
              assertThat(retryLines()).hasSizeGreaterThanOrEqualTo(2);
            });
    assertThat(controller.isAlive()).isTrue();

    int apiPort = URI.create(cluster.api.url()).getPort();
    try (TcpForwarder forwarder = new TcpForwarder(port, apiPort)) {
      await()
          .atMost(Duration.ofSeconds(90))
          .ignoreExceptions()
          .untilAsserted(
              () -> {
                assertThat(readyz(metrics)).isEqualTo("200 ok\n");
                assertThat(out()).contains("controller started in namespace " + cluster.ns);
              });
      stopAndExpectZero();
    }
    assertNoStackTrace();
    assertThat(retryLines()).allSatisfy(l -> assertThat(l).contains("WARN").contains(unreachable));
  }

  @Test
  void aWrongCaIsRetriedAndReportedWithoutEndingTheProcess() throws Exception {
    int metrics = FreePorts.take(1)[0];
    Path wrongCa = tmp.resolve("wrong-ca.crt");
    Process openssl =
        new ProcessBuilder(
                "openssl",
                "req",
                "-x509",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-days",
                "1",
                "-subj",
                "/CN=not-the-api-server",
                "-keyout",
                tmp.resolve("wrong-ca.key").toString(),
                "-out",
                wrongCa.toString())
            .redirectErrorStream(true)
            .redirectOutput(tmp.resolve("openssl.log").toFile())
            .start();
    assertThat(openssl.waitFor(60, TimeUnit.SECONDS)).isTrue();
    assertThat(openssl.exitValue()).as(Files.readString(tmp.resolve("openssl.log"))).isZero();
    Path kubeconfig =
        rewrite(
            cluster.kubeconfig(tmp.resolve("real")),
            cluster.api.caFile().toString(),
            wrongCa.toString());
    controller = start(kubeconfig, metrics);

    await()
        .atMost(Duration.ofSeconds(60))
        .ignoreExceptions()
        .untilAsserted(
            () -> {
              assertThat(readyz(metrics))
                  .startsWith("503 not ready: ")
                  .contains("certification path");
              assertThat(retryLines()).hasSizeGreaterThanOrEqualTo(2);
            });
    assertThat(controller.isAlive()).isTrue();
    stopAndExpectZero();
    assertNoStackTrace();
  }

  private Process start(Path kubeconfig, int metrics) throws IOException {
    return ControllerJar.start(
        kubeconfig,
        tmp.resolve("out"),
        tmp.resolve("out"),
        List.of("-Djakri.controller.notReadyNoticeSeconds=2"),
        "--namespace",
        cluster.ns,
        "--metrics-port",
        String.valueOf(metrics));
  }

  private void stopAndExpectZero() throws Exception {
    controller.destroy();
    assertThat(controller.waitFor(30, TimeUnit.SECONDS)).isTrue();
    assertThat(controller.exitValue()).as(out()).isZero();
  }

  private void assertNoStackTrace() throws IOException {
    assertThat(out()).as("no stack trace").doesNotContain("\tat ");
  }

  private String readyz(int port) throws Exception {
    HttpResponse<String> r =
        http.send(
            HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + port + "/readyz")).build(),
            HttpResponse.BodyHandlers.ofString());
    return r.statusCode() + " " + r.body();
  }

  private String out() throws IOException {
    return Files.readString(tmp.resolve("out"));
  }

  private List<String> retryLines() throws IOException {
    return out().lines().filter(l -> l.contains(RETRYING)).toList();
  }

  private static Path rewrite(Path kubeconfig, String from, String to) throws IOException {
    String text = Files.readString(kubeconfig);
    assertThat(text).contains(from);
    Files.writeString(kubeconfig, text.replace(from, to));
    return kubeconfig;
  }
}
