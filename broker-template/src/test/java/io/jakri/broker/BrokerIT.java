package io.jakri.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.broker.device.DeviceEnv;
import io.jakri.broker.device.EnvListing;
import io.jakri.broker.http.DeviceJson;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Starts the broker as {@code main} does, on an ephemeral port, and talks HTTP to it. */
class BrokerIT {

  private final HttpClient client =
      HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
  private final ByteArrayOutputStream log = new ByteArrayOutputStream();
  private DeviceEnv devices;
  private Broker.Running broker;

  @BeforeEach
  void startBroker() throws Exception {
    Map<String, String> env = new java.util.HashMap<>(EnvListing.load("spookd-seed.env"));
    env.put(BrokerSettings.PORT_VAR, "0");
    devices = DeviceEnv.parse(env);
    broker =
        Broker.start(
            BrokerSettings.fromEnv(env),
            devices,
            new PrintStream(log, true, StandardCharsets.UTF_8));
  }

  @AfterEach
  void stopBroker() {
    broker.close();
  }

  private HttpResponse<String> send(String method, String path) throws Exception {
    HttpRequest request =
        HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + broker.port() + path))
            .timeout(Duration.ofSeconds(5))
            .method(method, HttpRequest.BodyPublishers.noBody())
            .build();
    return client.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
  }

  @Test
  void getDeviceReturnsTheDevicesAsJson() throws Exception {
    HttpResponse<String> response = send("GET", "/device");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValue("Content-Type"))
        .contains("application/json; charset=utf-8");
    assertThat(response.headers().firstValue("X-Content-Type-Options")).contains("nosniff");
    assertThat(response.body()).isEqualTo(DeviceJson.render(devices));
    assertThat(response.body()).contains("\"EXAMPLECOM_WIDGET\"").contains("192.168.0.200");
  }

  @Test
  void healthzSaysOk() throws Exception {
    HttpResponse<String> response = send("GET", "/healthz");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.body()).isEqualTo("ok\n");
  }

  @Test
  void headGivesTheLengthWithoutABody() throws Exception {
    HttpResponse<String> response = send("HEAD", "/device");

    assertThat(response.statusCode()).isEqualTo(200);
    assertThat(response.headers().firstValueAsLong("Content-Length"))
        .hasValue(DeviceJson.render(devices).getBytes(StandardCharsets.UTF_8).length);
    assertThat(response.body()).isEmpty();
  }

  @Test
  void otherMethodsAreNotAllowed() throws Exception {
    HttpResponse<String> response = send("POST", "/device");

    assertThat(response.statusCode()).isEqualTo(405);
    assertThat(response.headers().firstValue("Allow")).contains("GET, HEAD");
  }

  @Test
  void otherPathsAreNotFound() throws Exception {
    assertThat(send("GET", "/device/0").statusCode()).isEqualTo(404);
    assertThat(send("GET", "/").statusCode()).isEqualTo(404);
  }

  @Test
  void startupLogSaysWhatTheBrokerGotAndWhereItListens() {
    assertThat(log.toString(StandardCharsets.UTF_8))
        .contains("jakri broker: 2 class grant(s), 0 Instance grant(s)")
        .contains("\"EXAMPLECOM_THINGAMAJIG\"")
        .contains("serving /device and /healthz on port " + broker.port());
  }
}
