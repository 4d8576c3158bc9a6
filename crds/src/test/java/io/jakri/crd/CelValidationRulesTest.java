package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.node.ArrayNode;
import com.fasterxml.jackson.databind.node.ObjectNode;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.jakri.crd.OfflineSchemaValidator.Violation;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/**
 * The committed CRDs' validation, evaluated offline: the CEL rules with Google's CEL for Java and
 * the OpenAPI keywords with {@link OfflineSchemaValidator}. Each rule accepts Akri's examples and
 * rejects the objects it is there to reject, with its message. (The mock API server evaluates none
 * of this; a real API server was not available here.)
 */
class CelValidationRulesTest {

  private final CustomResourceDefinition configurationCrd = Crds.load().get(0);
  private final CustomResourceDefinition instanceCrd = Crds.load().get(1);
  private final OfflineSchemaValidator configurations =
      new OfflineSchemaValidator(configurationCrd);
  private final OfflineSchemaValidator instances = new OfflineSchemaValidator(instanceCrd);

  @Test
  void everyRuleIsOneThisTestCovers() {
    // A new rule in the model must come with cases here.
    assertThat(OfflineSchemaValidator.rules(root(configurationCrd)))
        .containsExactlyInAnyOrder(
            "self.metadata.name.size() <= 56",
            "!self.metadata.name.contains('.')",
            "has(self.brokerPodSpec) != has(self.brokerJobSpec)",
            "has(self.value) != has(self.valueFrom)",
            "has(self.secretKeyRef) != has(self.configMapKeyRef)");
    assertThat(OfflineSchemaValidator.rules(root(instanceCrd)))
        .containsExactly("self.metadata.name.size() <= 63");
  }

  @Test
  void rulesOnlyReferToFieldsTheirSchemaDeclares() {
    // self is dyn offline, so check field names here as the API server's type checker would.
    List<String> unknown = new ArrayList<>();
    collectUnknownFieldReferences(root(configurationCrd), true, unknown);
    collectUnknownFieldReferences(root(instanceCrd), true, unknown);
    assertThat(unknown).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(strings = {"zeroconf-configuration.yaml", "debug-echo-configuration.yaml"})
  void akriConfigurationsPassEveryCheck(String file) {
    assertThat(configurations.validate(yaml(file))).isEmpty();
  }

  @Test
  void akriInstancePassesEveryCheck() {
    assertThat(instances.validate(yaml("debug-echo-instance.yaml"))).isEmpty();
  }

  @Test
  void configurationNameOf56CharactersIsAcceptedAnd57Rejected() {
    ObjectNode ok = zeroconf();
    metadata(ok).put("name", "c".repeat(56));
    ObjectNode tooLong = zeroconf();
    metadata(tooLong).put("name", "c".repeat(57));

    assertThat(configurations.validate(ok)).isEmpty();
    assertThat(configurations.validate(tooLong))
        .containsExactly(
            new Violation(
                "",
                "a Configuration name is at most 56 characters, so that"
                    + " akri.sh/<name>-<6 hex digits> stays a valid extended-resource name"));
  }

  @Test
  void configurationNameWithADotIsRejected() {
    ObjectNode dotted = zeroconf();
    metadata(dotted).put("name", "akri.zeroconf");

    assertThat(configurations.validate(dotted))
        .containsExactly(
            new Violation("", "a Configuration name must be a DNS-1123 label: no '.'"));
  }

  @Test
  void instanceNameOf63CharactersIsAcceptedAnd64Rejected() {
    ObjectNode ok = yaml("debug-echo-instance.yaml");
    metadata(ok).put("name", "i".repeat(63));
    ObjectNode tooLong = yaml("debug-echo-instance.yaml");
    metadata(tooLong).put("name", "i".repeat(64));

    assertThat(instances.validate(ok)).isEmpty();
    assertThat(instances.validate(tooLong)).extracting(Violation::path).containsExactly("");
  }

  @Test
  void brokerSpecNeedsExactlyOneBrokerKind() {
    String message = "brokerSpec must set exactly one of brokerPodSpec and brokerJobSpec";
    ObjectNode neither = zeroconf();
    brokerSpec(neither).remove("brokerPodSpec");
    ObjectNode both = zeroconf();
    brokerSpec(both).putObject("brokerJobSpec").put("parallelism", 1);
    ObjectNode noBrokerAtAll = zeroconf();
    spec(noBrokerAtAll).remove("brokerSpec");

    assertThat(configurations.validate(neither))
        .containsExactly(new Violation("spec.brokerSpec", message));
    assertThat(configurations.validate(both))
        .containsExactly(new Violation("spec.brokerSpec", message));
    assertThat(configurations.validate(noBrokerAtAll)).isEmpty();
    assertThat(configurations.validate(yaml("debug-echo-configuration.yaml"))).isEmpty();
  }

  @Test
  void discoveryPropertyNeedsValueXorValueFrom() {
    String message = "a discovery property sets exactly one of value and valueFrom";
    ObjectNode neither = zeroconf();
    property(neither, 0).remove("value");
    ObjectNode both = zeroconf();
    property(both, 0).set("valueFrom", property(both, 1).get("valueFrom").deepCopy());
    ObjectNode emptyValue = zeroconf();
    property(emptyValue, 0).put("value", "");

    assertThat(configurations.validate(neither))
        .containsExactly(new Violation("spec.discoveryHandler.discoveryProperties[0]", message));
    assertThat(configurations.validate(both))
        .containsExactly(new Violation("spec.discoveryHandler.discoveryProperties[0]", message));
    assertThat(configurations.validate(emptyValue)).isEmpty();
  }

  @Test
  void valueFromNeedsExactlyOneOfSecretAndConfigMapKeyRef() {
    String message = "valueFrom sets exactly one of secretKeyRef and configMapKeyRef";
    ObjectNode neither = zeroconf();
    ((ObjectNode) property(neither, 1).get("valueFrom")).remove("secretKeyRef");
    ObjectNode both = zeroconf();
    ((ObjectNode) property(both, 1).get("valueFrom"))
        .set("configMapKeyRef", property(both, 2).get("valueFrom").get("configMapKeyRef"));

    String at = "spec.discoveryHandler.discoveryProperties[1].valueFrom";
    assertThat(configurations.validate(neither)).containsExactly(new Violation(at, message));
    assertThat(configurations.validate(both)).containsExactly(new Violation(at, message));
  }

  @ParameterizedTest
  @ValueSource(strings = {"1ST", "CAMERA-PASSWORD", "camera password", "Ü", ""})
  void discoveryPropertyNamesThatAreNotIdentifiersAreRejected(String name) {
    ObjectNode configuration = zeroconf();
    property(configuration, 0).put("name", name);

    assertThat(configurations.validate(configuration))
        .containsExactly(
            new Violation(
                "spec.discoveryHandler.discoveryProperties[0].name",
                "should match '^[_A-Za-z][_A-Za-z0-9]*$'"));
  }

  @ParameterizedTest
  @ValueSource(strings = {"_", "_x1", "PROTOCOL", "camelCase9"})
  void discoveryPropertyNamesThatAreIdentifiersAreAccepted(String name) {
    ObjectNode configuration = zeroconf();
    property(configuration, 0).put("name", name);

    assertThat(configurations.validate(configuration)).isEmpty();
  }

  @Test
  void capacityBelowOneIsRejectedInBothResources() {
    ObjectNode configuration = zeroconf();
    spec(configuration).put("capacity", 0);
    ObjectNode instance = yaml("debug-echo-instance.yaml");
    spec(instance).put("capacity", 0);

    assertThat(configurations.validate(configuration))
        .containsExactly(new Violation("spec.capacity", "should be greater than or equal to 1.0"));
    assertThat(instances.validate(instance))
        .containsExactly(new Violation("spec.capacity", "should be greater than or equal to 1.0"));
  }

  @Test
  void requiredFieldsAreEnforced() {
    ObjectNode noHandlerName = zeroconf();
    ((ObjectNode) spec(noHandlerName).get("discoveryHandler")).remove("name");
    ObjectNode noConfigurationName = yaml("debug-echo-instance.yaml");
    spec(noConfigurationName).remove("configurationName");

    assertThat(configurations.validate(noHandlerName))
        .containsExactly(new Violation("spec.discoveryHandler.name", "Required value"));
    assertThat(instances.validate(noConfigurationName))
        .containsExactly(new Violation("spec.configurationName", "Required value"));
  }

  @Test
  void anInstanceNeedsCdiNameAndCapacityAsAkrisCrdRequires() {
    ObjectNode instance = yaml("debug-echo-instance.yaml");
    spec(instance).remove("cdiName");
    spec(instance).remove("capacity");

    assertThat(instances.validate(instance))
        .containsExactlyInAnyOrder(
            new Violation("spec.cdiName", "Required value"),
            new Violation("spec.capacity", "Required value"));
  }

  @Test
  void overlongNodeNamesAndSlotUsagesAreRejected() {
    ObjectNode instance = yaml("debug-echo-instance.yaml");
    ((ArrayNode) spec(instance).get("nodes")).set(1, "n".repeat(254));
    ((ObjectNode) spec(instance).get("deviceUsage"))
        .put("akri-debug-echo-foo-8120fe-1", "C:" + "v".repeat(600) + ":node-a");
    ObjectNode longestNodeName = yaml("debug-echo-instance.yaml");
    ((ArrayNode) spec(longestNodeName).get("nodes")).set(1, "n".repeat(253));

    assertThat(instances.validate(instance))
        .containsExactlyInAnyOrder(
            new Violation("spec.nodes[1]", "may not be longer than 253"),
            new Violation(
                "spec.deviceUsage[akri-debug-echo-foo-8120fe-1]", "may not be longer than 512"));
    assertThat(instances.validate(longestNodeName)).isEmpty();
  }

  private static ObjectNode yaml(String file) {
    return CrdFiles.parse(AkriResourceRoundTripTest.resource(file));
  }

  private static ObjectNode zeroconf() {
    return yaml("zeroconf-configuration.yaml");
  }

  private static ObjectNode metadata(ObjectNode resource) {
    return (ObjectNode) resource.get("metadata");
  }

  private static ObjectNode spec(ObjectNode resource) {
    return (ObjectNode) resource.get("spec");
  }

  private static ObjectNode brokerSpec(ObjectNode configuration) {
    return (ObjectNode) spec(configuration).get("brokerSpec");
  }

  private static ObjectNode property(ObjectNode configuration, int index) {
    JsonNode properties = spec(configuration).get("discoveryHandler").get("discoveryProperties");
    return (ObjectNode) properties.get(index);
  }

  private static JSONSchemaProps root(CustomResourceDefinition crd) {
    return crd.getSpec().getVersions().get(0).getSchema().getOpenAPIV3Schema();
  }

  private static final Pattern SELF_FIELD = Pattern.compile("self\\.([A-Za-z_][A-Za-z0-9_]*)");

  private static void collectUnknownFieldReferences(
      JSONSchemaProps schema, boolean isRoot, List<String> unknown) {
    if (schema.getXKubernetesValidations() != null) {
      Set<String> declared =
          schema.getProperties() == null ? Set.of() : schema.getProperties().keySet();
      schema
          .getXKubernetesValidations()
          .forEach(
              rule -> {
                Matcher m = SELF_FIELD.matcher(rule.getRule());
                while (m.find()) {
                  String field = m.group(1);
                  boolean rootMetadata = isRoot && field.equals("metadata");
                  if (!declared.contains(field) && !rootMetadata) {
                    unknown.add(rule.getRule() + " -> " + field);
                  }
                }
              });
    }
    if (schema.getProperties() != null) {
      schema
          .getProperties()
          .values()
          .forEach(child -> collectUnknownFieldReferences(child, false, unknown));
    }
    if (schema.getItems() != null && schema.getItems().getSchema() != null) {
      collectUnknownFieldReferences(schema.getItems().getSchema(), false, unknown);
    }
  }
}
