package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.tuple;

import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceColumnDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinitionVersion;
import io.fabric8.kubernetes.api.model.apiextensions.v1.JSONSchemaProps;
import io.fabric8.kubernetes.api.model.apiextensions.v1.ValidationRule;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** What the committed CRDs tell the API server and kubectl (read through {@link Crds#load()}). */
class CrdSchemaTest {

  private final CustomResourceDefinition configuration = Crds.load().get(0);
  private final CustomResourceDefinition instance = Crds.load().get(1);

  @Test
  void loadReturnsTheConfigurationThenTheInstanceDefinition() {
    assertThat(Crds.load())
        .extracting(crd -> crd.getMetadata().getName())
        .containsExactly("configurations.akri.sh", "instances.akri.sh");
    assertThat(Crds.load().get(0)).isNotSameAs(Crds.load().get(0)).isEqualTo(Crds.load().get(0));
  }

  @Test
  void bothAreNamespacedInGroupAkriShWithTheSingleVersionV0() {
    for (CustomResourceDefinition crd : List.of(configuration, instance)) {
      assertThat(crd.getSpec().getGroup()).isEqualTo(Crds.GROUP).isEqualTo("akri.sh");
      assertThat(crd.getSpec().getScope()).isEqualTo("Namespaced");
      assertThat(crd.getSpec().getVersions())
          .extracting(
              CustomResourceDefinitionVersion::getName,
              CustomResourceDefinitionVersion::getServed,
              CustomResourceDefinitionVersion::getStorage)
          .containsExactly(tuple("v0", true, true));
    }
    assertThat(Crds.VERSION).isEqualTo("v0");
  }

  @Test
  void namesMatchAkriWithShortNamesAndTheAllCategory() {
    assertThat(configuration.getSpec().getNames())
        .satisfies(
            n -> {
              assertThat(n.getKind()).isEqualTo("Configuration");
              assertThat(n.getPlural()).isEqualTo("configurations");
              assertThat(n.getSingular()).isEqualTo("configuration");
              assertThat(n.getShortNames()).containsExactly("akric");
              assertThat(n.getCategories()).containsExactly("all");
            });
    assertThat(instance.getSpec().getNames())
        .satisfies(
            n -> {
              assertThat(n.getKind()).isEqualTo("Instance");
              assertThat(n.getPlural()).isEqualTo("instances");
              assertThat(n.getSingular()).isEqualTo("instance");
              assertThat(n.getShortNames()).containsExactly("akrii");
              assertThat(n.getCategories()).containsExactly("all");
            });
  }

  @Test
  void getInstancesPrintsConfigSharedNodesAgeInThatOrder() {
    // kubectl prints NAME, then these columns in order: NAME CONFIG SHARED NODES AGE.
    assertThat(version(instance).getAdditionalPrinterColumns())
        .extracting(
            CustomResourceColumnDefinition::getName,
            CustomResourceColumnDefinition::getJsonPath,
            CustomResourceColumnDefinition::getType,
            CustomResourceColumnDefinition::getPriority)
        .containsExactly(
            tuple("Config", ".spec.configurationName", "string", 0),
            tuple("Shared", ".spec.shared", "boolean", 0),
            tuple("Nodes", ".spec.nodes", "string", 0),
            tuple("Age", ".metadata.creationTimestamp", "date", 0));
  }

  @Test
  void getConfigurationsPrintsCapacityAndAge() {
    assertThat(version(configuration).getAdditionalPrinterColumns())
        .extracting(
            CustomResourceColumnDefinition::getName,
            CustomResourceColumnDefinition::getJsonPath,
            CustomResourceColumnDefinition::getType)
        .containsExactly(
            tuple("Capacity", ".spec.capacity", "integer"),
            tuple("Age", ".metadata.creationTimestamp", "date"));
  }

  @Test
  void onlyTheConfigurationHasAStatusSubresource() {
    assertThat(version(configuration).getSubresources().getStatus()).isNotNull();
    assertThat(version(configuration).getSubresources().getScale()).isNull();
    assertThat(version(instance).getSubresources()).isNull();
  }

  @Test
  void schemasAreStructuralEveryNodeDeclaresAType() {
    for (CustomResourceDefinition crd : List.of(configuration, instance)) {
      List<String> untyped = new ArrayList<>();
      collectUntyped("", root(crd), untyped);
      assertThat(untyped).as(crd.getMetadata().getName()).isEmpty();
    }
  }

  @Test
  void brokerAndServiceSpecsAreOpaqueObjectsThatKeepUnknownFields() {
    JSONSchemaProps spec = root(configuration).getProperties().get("spec");
    JSONSchemaProps brokerSpec = spec.getProperties().get("brokerSpec");
    for (JSONSchemaProps opaque :
        List.of(
            brokerSpec.getProperties().get("brokerPodSpec"),
            brokerSpec.getProperties().get("brokerJobSpec"),
            spec.getProperties().get("instanceServiceSpec"),
            spec.getProperties().get("configurationServiceSpec"))) {
      assertThat(opaque.getType()).isEqualTo("object");
      assertThat(opaque.getXKubernetesPreserveUnknownFields()).isTrue();
      assertThat(opaque.getProperties()).isNullOrEmpty();
    }
  }

  @Test
  void requiredFieldsAreTheOnesAkriRequires() {
    JSONSchemaProps spec = root(configuration).getProperties().get("spec");
    JSONSchemaProps handler = spec.getProperties().get("discoveryHandler");
    JSONSchemaProps property =
        handler.getProperties().get("discoveryProperties").getItems().getSchema();
    JSONSchemaProps valueFrom = property.getProperties().get("valueFrom");

    assertThat(spec.getRequired()).containsExactly("discoveryHandler");
    assertThat(handler.getRequired()).containsExactly("name");
    assertThat(property.getRequired()).containsExactly("name");
    assertThat(valueFrom.getProperties().get("secretKeyRef").getRequired())
        .containsExactlyInAnyOrder("name", "key");
    assertThat(valueFrom.getProperties().get("configMapKeyRef").getRequired())
        .containsExactlyInAnyOrder("name", "key");
    assertThat(root(instance).getProperties().get("spec").getRequired())
        .containsExactlyInAnyOrder("configurationName", "cdiName", "capacity");
  }

  @Test
  void capacityIsAtLeastOneAndDefaultsToOneInAConfiguration() {
    JSONSchemaProps capacity =
        root(configuration).getProperties().get("spec").getProperties().get("capacity");
    assertThat(capacity.getType()).isEqualTo("integer");
    assertThat(capacity.getMinimum()).isEqualTo(1.0);
    assertThat(capacity.getDefault().asInt()).isEqualTo(1);
    assertThat(
            root(instance).getProperties().get("spec").getProperties().get("capacity").getMinimum())
        .isEqualTo(1.0);
  }

  @Test
  void discoveryPropertyNamesMustBeIdentifiers() {
    JSONSchemaProps name =
        root(configuration)
            .getProperties()
            .get("spec")
            .getProperties()
            .get("discoveryHandler")
            .getProperties()
            .get("discoveryProperties")
            .getItems()
            .getSchema()
            .getProperties()
            .get("name");
    assertThat(name.getPattern()).isEqualTo("^[_A-Za-z][_A-Za-z0-9]*$");
  }

  @Test
  void instanceStringsHaveBoundedLengths() {
    Map<String, JSONSchemaProps> spec = root(instance).getProperties().get("spec").getProperties();
    assertThat(spec.get("nodes").getItems().getSchema().getMaxLength()).isEqualTo(253L);
    assertThat(spec.get("deviceUsage").getAdditionalProperties().getSchema().getMaxLength())
        .isEqualTo(512L);
    assertThat(spec.get("configurationName").getMaxLength()).isEqualTo(56L);
  }

  @Test
  void celRulesSitWhereTheyApplyWithMessages() {
    JSONSchemaProps spec = root(configuration).getProperties().get("spec");
    JSONSchemaProps property =
        spec.getProperties()
            .get("discoveryHandler")
            .getProperties()
            .get("discoveryProperties")
            .getItems()
            .getSchema();

    assertThat(root(configuration).getXKubernetesValidations())
        .extracting(ValidationRule::getRule, ValidationRule::getMessage)
        .containsExactly(
            tuple(
                "self.metadata.name.size() <= 56",
                "a Configuration name is at most 56 characters, so that"
                    + " akri.sh/<name>-<6 hex digits> stays a valid extended-resource name"),
            tuple(
                "!self.metadata.name.contains('.')",
                "a Configuration name must be a DNS-1123 label: no '.'"));
    assertThat(spec.getProperties().get("brokerSpec").getXKubernetesValidations())
        .extracting(ValidationRule::getRule, ValidationRule::getMessage)
        .containsExactly(
            tuple(
                "has(self.brokerPodSpec) != has(self.brokerJobSpec)",
                "brokerSpec must set exactly one of brokerPodSpec and brokerJobSpec"));
    assertThat(property.getXKubernetesValidations())
        .extracting(ValidationRule::getRule, ValidationRule::getMessage)
        .containsExactly(
            tuple(
                "has(self.value) != has(self.valueFrom)",
                "a discovery property sets exactly one of value and valueFrom"));
    assertThat(property.getProperties().get("valueFrom").getXKubernetesValidations())
        .extracting(ValidationRule::getRule, ValidationRule::getMessage)
        .containsExactly(
            tuple(
                "has(self.secretKeyRef) != has(self.configMapKeyRef)",
                "valueFrom sets exactly one of secretKeyRef and configMapKeyRef"));
    assertThat(root(instance).getXKubernetesValidations())
        .extracting(ValidationRule::getRule)
        .containsExactly("self.metadata.name.size() <= 63");
  }

  @Test
  void configurationStatusCarriesConditionsInstancesNodesAndObservedGeneration() {
    JSONSchemaProps status = root(configuration).getProperties().get("status");
    assertThat(status.getProperties())
        .containsOnlyKeys("conditions", "instances", "nodes", "observedGeneration");
    assertThat(
            status
                .getProperties()
                .get("nodes")
                .getAdditionalProperties()
                .getSchema()
                .getProperties())
        .containsOnlyKeys(
            "state", "message", "devices", "observedGeneration", "lastTransitionTime");
  }

  private static CustomResourceDefinitionVersion version(CustomResourceDefinition crd) {
    assertThat(crd.getSpec().getVersions()).hasSize(1);
    return crd.getSpec().getVersions().get(0);
  }

  private static JSONSchemaProps root(CustomResourceDefinition crd) {
    return version(crd).getSchema().getOpenAPIV3Schema();
  }

  /** Structural schemas: every node has a type (an opaque object still says object). */
  private static void collectUntyped(String at, JSONSchemaProps node, List<String> untyped) {
    if (node.getType() == null && !Boolean.TRUE.equals(node.getXKubernetesIntOrString())) {
      untyped.add(at.isEmpty() ? "/" : at);
    }
    if (node.getProperties() != null) {
      node.getProperties().forEach((k, v) -> collectUntyped(at + "/" + k, v, untyped));
    }
    if (node.getItems() != null && node.getItems().getSchema() != null) {
      collectUntyped(at + "[]", node.getItems().getSchema(), untyped);
    }
    if (node.getAdditionalProperties() != null
        && node.getAdditionalProperties().getSchema() != null) {
      collectUntyped(at + "/*", node.getAdditionalProperties().getSchema(), untyped);
    }
  }
}
