package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The packaged plugin against a mosquitto that wants TLS (a CA and server certificate made by
 * openssl for 127.0.0.1) and a username and password: the CA PEM, username and password reach the
 * handler as discoveryProperties.
 */
class MqttTlsIT {

  private static Path dir;
  private static Mosquitto broker;
  private static PluginJar plugin;
  private static ScheduledExecutorService scheduler;

  @BeforeAll
  static void startBroker() throws Exception {
    dir = Files.createTempDirectory("jakri-mqtt-tls-it");
    if (Mosquitto.executable("openssl") == null
        || Mosquitto.executable("mosquitto_passwd") == null) {
      broker = NeedsMosquitto.start(dir); // skips, or fails under CI, when mosquitto is missing
    }
    Files.writeString(dir.resolve("san.ext"), "subjectAltName=IP:127.0.0.1\n");
    run(
        "openssl",
        "req",
        "-x509",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "ca.key",
        "-out",
        "ca.pem",
        "-days",
        "2",
        "-subj",
        "/CN=jakri test CA");
    run(
        "openssl",
        "req",
        "-newkey",
        "rsa:2048",
        "-nodes",
        "-keyout",
        "server.key",
        "-out",
        "server.csr",
        "-subj",
        "/CN=127.0.0.1");
    run(
        "openssl",
        "x509",
        "-req",
        "-in",
        "server.csr",
        "-CA",
        "ca.pem",
        "-CAkey",
        "ca.key",
        "-CAcreateserial",
        "-out",
        "server.pem",
        "-days",
        "2",
        "-extfile",
        "san.ext");
    run("mosquitto_passwd", "-c", "-b", "passwd", "device-admin", "s3cret-pw");
    // mosquitto started as root reads its files as the user mosquitto after dropping privileges.
    Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
    try (var files = Files.list(dir)) {
      for (Path f : files.toList()) {
        Files.setPosixFilePermissions(f, PosixFilePermissions.fromString("rw-r--r--"));
      }
    }
    broker =
        NeedsMosquitto.start(
            dir,
            "allow_anonymous false\npassword_file "
                + dir.resolve("passwd")
                + "\ncafile "
                + dir.resolve("ca.pem")
                + "\ncertfile "
                + dir.resolve("server.pem")
                + "\nkeyfile "
                + dir.resolve("server.key")
                + "\n",
            "ssl",
            List.of(
                "--cafile",
                dir.resolve("ca.pem").toString(),
                "-u",
                "device-admin",
                "-P",
                "s3cret-pw"));
    plugin = PluginJar.loadPackaged(Files.createDirectories(dir.resolve("plugins")));
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void stopBroker() throws Exception {
    if (plugin != null) {
      plugin.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (broker != null) {
      broker.close();
    }
  }

  private static void run(String... command) throws IOException, InterruptedException {
    List<String> line = new java.util.ArrayList<>(List.of(command));
    line.set(0, Mosquitto.executable(command[0]));
    Process p = new ProcessBuilder(line).directory(dir.toFile()).redirectErrorStream(true).start();
    String out = new String(p.getInputStream().readAllBytes());
    if (!p.waitFor(30, TimeUnit.SECONDS) || p.exitValue() != 0) {
      throw new IOException(String.join(" ", command) + " failed: " + out);
    }
  }

  @Test
  void tlsWithCredentialsFromDiscoveryProperties() throws Exception {
    RecordingListener listener = new RecordingListener();
    Map<String, String> properties =
        Map.of(
            "username", "device-admin",
            "password", "s3cret-pw",
            "caCertificate", Files.readString(dir.resolve("ca.pem")));
    DiscoveryContext context =
        new DiscoveryContext(
            "tls", "node-a", "brokers: [" + broker.url() + "]", properties, scheduler);
    try (Discovery discovery = plugin.handler().start(context, listener)) {
      broker.retain("homeassistant/lock/front/config", "{\"unique_id\": \"front-door\"}");
      await()
          .atMost(Duration.ofSeconds(15))
          .until(() -> listener.lastIds().equals(List.of("front-door")));
      assertThat(listener.last().get().get(0).properties())
          .containsEntry("MQTT_BROKER", broker.url())
          .doesNotContainValue("s3cret-pw");
      broker.retain("homeassistant/lock/front/config", "");
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().isEmpty());
    }
  }
}
