package io.jakri.handler.mqtt;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class MqttHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String details, Map<String, String> properties) {
    return new DiscoveryContext("c", "node-a", details, properties, scheduler);
  }

  @Test
  void nameAndValidation() {
    MqttHandler handler = new MqttHandler();
    assertThat(handler.name()).isEqualTo("mqtt");
    assertThat(handler.validate(context("brokers: [tcp://b]", Map.of())).errors()).isEmpty();
    assertThat(handler.validate(context("mode: x", Map.of())).errors())
        .contains("mode (line 1, column 1): must be homeassistant or generic but is \"x\"");
  }

  @Test
  void credentialsComeFromDiscoveryPropertiesAndThePasswordIsNeverPrinted() throws Exception {
    PahoSession.Access access =
        MqttHandler.access(context("", Map.of("username", "u", "password", "s3cret")));

    assertThat(access.username()).contains("u");
    assertThat(access.password().map(String::new)).contains("s3cret");
    assertThat(access.toString()).doesNotContain("s3cret");
  }

  @Test
  void aPasswordWithoutAUserOrABadCaIsRefusedWithoutEchoingTheValue() {
    assertThatThrownBy(() -> MqttHandler.access(context("", Map.of("password", "s3cret"))))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageNotContaining("s3cret")
        .hasMessageContaining("username is not");
    assertThatThrownBy(
            () -> MqttHandler.access(context("", Map.of("caCertificate", "-----BEGIN nothing"))))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("caCertificate");
  }

  @Test
  void clientIdsFitMqtt311AndDifferPerRun() {
    String a = MqttHandler.clientId(context("", Map.of()));
    String b = MqttHandler.clientId(context("", Map.of()));
    assertThat(a).hasSizeLessThanOrEqualTo(23).matches("[a-z0-9]+").isNotEqualTo(b);
    assertThat(a.substring(0, 17)).isEqualTo(b.substring(0, 17));
  }
}
