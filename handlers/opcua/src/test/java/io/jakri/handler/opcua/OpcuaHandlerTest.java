package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class OpcuaHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String details) {
    return new DiscoveryContext("opcua-test", "node-a", details, Map.of(), scheduler);
  }

  @Test
  void nameIsAkris() {
    assertThat(new OpcuaHandler().name()).isEqualTo("opcua");
  }

  @Test
  void validateReportsErrorsAndWarnings() {
    Validation validation =
        new OpcuaHandler()
            .validate(
                context(
                    "opcuaDiscoveryMethod: {standard: {discoveryUrls: [\"tcp://x:1/\"]}}\nextra:"
                        + " 1"));

    assertThat(validation.valid()).isFalse();
    assertThat(validation.errors())
        .containsExactly(
            "opcuaDiscoveryMethod.standard.discoveryUrls[0] must be an opc.tcp://host:port/ URL,"
                + " but \"tcp://x:1/\" is not usable: it does not start with opc.tcp://");
    assertThat(validation.warnings())
        .containsExactly("extra is not an opcua setting and is ignored");
  }

  @Test
  void startRefusesInvalidDetailsWithoutStartingThreads() {
    OpcuaHandler handler = new OpcuaHandler();

    assertThatThrownBy(() -> handler.start(context(""), new RecordingListener()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageStartingWith("opcuaDiscoveryMethod is required");
    assertThat(handler.transportActive()).isFalse();
  }

  @Test
  void transportRunsOnlyWhileADiscoveryDoes() throws Exception {
    OpcuaHandler handler =
        new OpcuaHandler((ctx, lease) -> url -> new CompletableFuture<>(), host -> true);
    String details = "opcuaDiscoveryMethod: {standard: {}}";

    Discovery first = handler.start(context(details), new RecordingListener());
    Discovery second = handler.start(context(details), new RecordingListener());
    assertThat(handler.transportActive()).isTrue();
    first.close();
    first.close();
    assertThat(handler.transportActive()).isTrue();
    second.close();
    assertThat(handler.transportActive()).isFalse();
  }
}
