package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ZeroconfHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String yaml) {
    return new DiscoveryContext("zeroconf", "node-1", yaml, Map.of(), scheduler);
  }

  @Test
  void isNamedZeroconf() {
    assertThat(new ZeroconfHandler().name()).isEqualTo("zeroconf");
    assertThat(new ZeroconfHandler().aliases()).isEmpty();
  }

  @Test
  void validateReportsErrorsAndWarningsWithoutThrowing() {
    Validation validation =
        new ZeroconfHandler().validate(context("kind: http\nport: 99999\nextra: 1"));

    assertThat(validation.valid()).isFalse();
    assertThat(validation.errors()).hasSize(2);
    assertThat(validation.warnings())
        .containsExactly("extra is not a zeroconf setting and is ignored");
  }

  @Test
  void validateAcceptsAkriStyleDetails() {
    assertThat(new ZeroconfHandler().validate(context("kind: _rust._tcp\nport: 8888")).valid())
        .isTrue();
  }

  @Test
  void startRejectsInvalidDetailsNamingTheField() {
    assertThatThrownBy(
            () -> new ZeroconfHandler().start(context("name: x"), new RecordingListener()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageStartingWith("kind is required");
  }

  @Test
  void jmdnsHostNameIsADnsLabelDerivedFromTheNode() {
    DiscoveryContext ctx = new DiscoveryContext("c", "Node_1.example.com", "", Map.of(), scheduler);

    assertThat(ZeroconfHandler.jmdnsHostName(ctx)).isEqualTo("jakri-node-1-example-com");
  }
}
