package io.jakri.agent.controlplane;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.agent.LogCapture;
import io.jakri.agent.cluster.Events;
import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.discovery.PropertyResolver;
import io.jakri.agent.dra.DraOptions;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.model.ConfigurationSpec;
import java.nio.file.Path;
import java.util.Optional;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** {@link StandaloneControlPlane} on its own: what it supplies without an API server. */
class StandaloneControlPlaneTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  @Test
  void refusesToStartWithoutConfig() {
    assertThatThrownBy(
            () -> new StandaloneControlPlane(Optional.empty(), scheduler, Events.discard()))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("--config is required");
  }

  @Test
  void suppliesTheInMemoryStoreTheGivenEventsAndNoApiServer() throws Exception {
    Events events = Events.discard();
    StandaloneControlPlane mode =
        new StandaloneControlPlane(Optional.of(Path.of("c.yaml")), scheduler, events);

    assertThat(mode.describe()).isEqualTo("standalone");
    assertThat(mode.store()).isInstanceOf(InMemoryInstanceStore.class);
    assertThat(mode.store().list()).isEmpty();
    assertThat(mode.events()).isSameAs(events);
    assertThat(mode.apiCalls()).isEmpty();
    assertThat(mode.synced()).isTrue();
    assertThat(mode.instanceNamespace("any-instance")).isEqualTo(ControlPlane.FALLBACK_NAMESPACE);
    assertThat(mode.instanceUid("any-instance")).isEmpty();
  }

  @Test
  void resolvesLiteralPropertiesOnly() throws Exception {
    StandaloneControlPlane mode =
        new StandaloneControlPlane(Optional.of(Path.of("c.yaml")), scheduler, Events.discard());
    ConfigurationSpec literal = parse("        value: \"1\"\n");
    ConfigurationSpec fromSecret =
        parse(
            "        valueFrom:\n          secretKeyRef:\n            name: s\n            key: k\n");

    assertThat(mode.properties().resolve(literal)).containsEntry("P", "1");
    assertThatThrownBy(() -> mode.properties().resolve(fromSecret))
        .isInstanceOf(PropertyResolver.UnresolvableException.class)
        .hasMessageContaining("standalone mode takes literal values only");
  }

  @Test
  void refusesDraWithOneErrorLine() {
    StandaloneControlPlane mode =
        new StandaloneControlPlane(Optional.of(Path.of("c.yaml")), scheduler, Events.discard());
    try (LogCapture logs = LogCapture.of(StandaloneControlPlane.class)) {
      assertThat(
              mode.dra(
                  new DraOptions(Path.of("registry"), Path.of("plugins")), null, Runnable::run))
          .isEmpty();
      assertThat(logs.messages())
          .containsExactly(
              "--dra needs cluster mode (ResourceClaims and ResourceSlices live in the API"
                  + " server); Dynamic Resource Allocation is off");
    }
  }

  @Test
  void hasNoConfigurationSourceBeforeItIsAttached() {
    StandaloneControlPlane mode =
        new StandaloneControlPlane(Optional.of(Path.of("c.yaml")), scheduler, Events.discard());

    assertThatThrownBy(mode::configurations)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage("not attached");
  }

  private static ConfigurationSpec parse(String property) {
    String yaml =
        "apiVersion: akri.sh/v0\n"
            + "kind: Configuration\n"
            + "metadata:\n"
            + "  name: c\n"
            + "spec:\n"
            + "  discoveryHandler:\n"
            + "    name: debugEcho\n"
            + "    discoveryProperties:\n"
            + "      - name: P\n"
            + property;
    ConfigurationParser.Result result = new ConfigurationParser().parse("c.yaml", yaml);
    assertThat(result.errors()).isEmpty();
    return result.configurations().get(0);
  }
}
