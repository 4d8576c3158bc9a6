package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.agent.configuration.ConfigurationParser;
import org.junit.jupiter.api.Test;

/**
 * Cluster mode keeps standalone mode's {@code unknown field ... ignored} hint: a Configuration from
 * the watch is checked by the same parser, and its warnings are logged once per generation, not on
 * every resync. (The real API server prunes unknown fields of {@code spec} and {@code
 * spec.discoveryHandler} by the CRD's schema; API servers without the schema, such as the mock
 * server, deliver them.)
 */
class ConfigurationWarningsTest {

  private static final KubernetesSerialization SERIALIZATION = new KubernetesSerialization();

  private static GenericKubernetesResource configuration(long generation, String extra) {
    return SERIALIZATION.unmarshal(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: cameras
          namespace: plant
          uid: 5e3c
          generation: %d
        spec:
          capacity: 1
          discoveryHandler:
            name: simulated
            discoveryDetails: "count: 1"
            %s
          %s
        """
            .formatted(generation, extra.isEmpty() ? "" : "detials: x", extra),
        GenericKubernetesResource.class);
  }

  private static ConfigurationWatcher.Known check(GenericKubernetesResource resource) {
    return ConfigurationWatcher.check(SERIALIZATION, new ConfigurationParser(), resource);
  }

  @Test
  void unknownFieldsAreTheSameHintAsInStandaloneMode() {
    ConfigurationWatcher.Known known = check(configuration(1, "brokerSpecc: {}"));

    assertThat(known.spec()).isPresent();
    assertThat(known.problems()).isEmpty();
    assertThat(known.warnings())
        .containsExactlyInAnyOrder(
            "configuration plant/cameras: unknown field spec.brokerSpecc ignored",
            "configuration plant/cameras: unknown field spec.discoveryHandler.detials ignored");
    // The same text as standalone mode's, only the source differs.
    assertThat(
            new ConfigurationParser()
                .parse(
                    "cameras.yaml",
                    SERIALIZATION.asYaml(configuration(1, "brokerSpecc: {}")).replace("---\n", ""))
                .warnings())
        .containsExactlyInAnyOrder(
            "cameras.yaml: unknown field spec.brokerSpecc ignored",
            "cameras.yaml: unknown field spec.discoveryHandler.detials ignored");
  }

  @Test
  void theHintIsLoggedOncePerGenerationNotOnEveryResync() {
    ConfigurationWatcher.Known first = check(configuration(1, "brokerSpecc: {}"));
    ConfigurationWatcher.Known resync = check(configuration(1, "brokerSpecc: {}"));
    ConfigurationWatcher.Known edited = check(configuration(2, "brokerSpecc: {}"));

    assertThat(first.warningsToLog(null)).hasSize(2);
    assertThat(resync.warningsToLog(first)).isEmpty();
    assertThat(edited.warningsToLog(resync)).isEqualTo(edited.warnings()).hasSize(2);
  }

  @Test
  void aValidConfigurationHasNothingToLog() {
    ConfigurationWatcher.Known clean = check(configuration(1, ""));

    assertThat(clean.spec()).isPresent();
    assertThat(clean.warnings()).isEmpty();
    assertThat(clean.warningsToLog(null)).isEmpty();
  }
}
