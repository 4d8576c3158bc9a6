package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.model.ConfigurationSpec.DiscoveryProperty;
import io.jakri.agent.model.ConfigurationSpec.KeyRef;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class DiscoveryHandlerFieldsTest {

  private final List<String> warnings = new ArrayList<>();
  private final List<String> problems = new ArrayList<>();

  @Test
  void readsNameStructuredDetailsAndBothKindsOfProperty() {
    Map<String, Object> handler = new LinkedHashMap<>();
    handler.put("name", "udev");
    handler.put("discoveryDetails", Map.of("udevRules", List.of("KERNEL==\"video*\"")));
    handler.put(
        "discoveryProperties",
        List.of(
            Map.of("name", "PORT", "value", 8080),
            Map.of(
                "name",
                "TOKEN",
                "valueFrom",
                Map.of("secretKeyRef", Map.of("name", "s", "key", "k", "optional", true)))));
    handler.put("extra", 1);

    Optional<DiscoveryHandlerFields.Handler> read =
        DiscoveryHandlerFields.read(handler, "c.yaml", warnings, problems);

    assertThat(problems).isEmpty();
    assertThat(warnings)
        .containsExactly("c.yaml: unknown field spec.discoveryHandler.extra ignored");
    assertThat(read).isPresent();
    assertThat(read.get().name()).isEqualTo("udev");
    assertThat(read.get().details()).isEqualTo("udevRules:\n- KERNEL==\"video*\"\n");
    assertThat(read.get().properties())
        .containsExactly(
            new DiscoveryProperty("PORT", Optional.of("8080"), Optional.empty()),
            new DiscoveryProperty(
                "TOKEN",
                Optional.empty(),
                Optional.of(new KeyRef(KeyRef.Kind.SECRET, "s", "k", Optional.empty(), true))));
  }

  @Test
  void everyProblemOfTheSectionIsCollected() {
    Map<String, Object> handler = new LinkedHashMap<>();
    handler.put("name", " ");
    handler.put("discoveryDetails", 12.5);
    handler.put(
        "discoveryProperties",
        List.of(
            Map.of("name", "A"),
            Map.of("name", "B", "value", "b"),
            Map.of("name", "C", "valueFrom", Map.of("configMapKeyRef", Map.of("name", "m")))));

    assertThat(DiscoveryHandlerFields.read(handler, "c.yaml", warnings, problems)).isEmpty();
    assertThat(problems)
        .containsExactly(
            "spec.discoveryHandler.name is required",
            "spec.discoveryHandler.discoveryDetails must be a string",
            "spec.discoveryHandler.discoveryProperties[0] must have exactly one of value and"
                + " valueFrom",
            "spec.discoveryHandler.discoveryProperties[2].valueFrom.configMapKeyRef.key is"
                + " required");
    assertThat(warnings).isEmpty();
  }

  @Test
  void aMissingOrMisshapenSectionIsOneProblem() {
    assertThat(DiscoveryHandlerFields.read(null, "c.yaml", warnings, problems)).isEmpty();
    assertThat(DiscoveryHandlerFields.read(List.of(), "c.yaml", warnings, problems)).isEmpty();
    assertThat(
            DiscoveryHandlerFields.read(
                Map.of("name", "x", "discoveryProperties", "no"), "c.yaml", warnings, problems))
        .isEmpty();
    assertThat(problems)
        .containsExactly(
            "spec.discoveryHandler is required",
            "spec.discoveryHandler must be a mapping",
            "spec.discoveryHandler.discoveryProperties must be a list");
  }
}
