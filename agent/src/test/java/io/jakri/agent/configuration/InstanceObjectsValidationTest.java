package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/** {@code spec.instanceObjects} as {@code validate} (strict) and the agent (lenient) read it. */
class InstanceObjectsValidationTest {

  private static String configuration(String specTail) {
    return """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: objects
        spec:
          discoveryHandler:
            name: debugEcho
            discoveryDetails: "descriptions: [foo]"
        %s"""
        .formatted(specTail.indent(2));
  }

  @Test
  void validTemplatesPassAndTheFieldIsNotUnknown() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse(
                "ok.yaml",
                configuration(
                    """
                    instanceObjects:
                      - apiVersion: apps/v1
                        kind: Deployment
                        metadata: {name: "{{INSTANCE_NAME}}-viewer"}
                        spec:
                          template:
                            spec:
                              containers:
                                - name: v
                                  image: busybox
                                  env: [{name: IP, value: "{{PROPERTY:IP}}"}]
                                  resources: {limits: {"{{PLACEHOLDER}}": "1"}}
                      - apiVersion: v1
                        kind: ConfigMap
                        data: {nodes: "{{NODES}}"}
                    """));
    assertThat(result.errors()).isEmpty();
    assertThat(result.warnings()).isEmpty();
    assertThat(result.configurations()).hasSize(1);
  }

  @Test
  void everyProblemOfEveryTemplateIsReportedInOnePassWithItsPath() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse(
                "bad.yaml",
                configuration(
                    """
                    instanceObjects:
                      - apiVersion: v1
                        kind: ConfigMap
                        metadata: {name: fixed, namespace: elsewhere}
                        data: {a: "{{INSTANCE}}"}
                      - apiVersion: v1
                      - just a string
                      - {apiVersion: v1, kind: Secret}
                      - {apiVersion: v1, kind: Secret}
                    """));
    assertThat(result.errors())
        .containsExactly(
            "bad.yaml: spec.instanceObjects[0].data.a: unknown placeholder {{INSTANCE}}; known:"
                + " {{INSTANCE_NAME}}, {{CONFIGURATION_NAME}}, {{NAMESPACE}}, {{RESOURCE_NAME}},"
                + " {{PLACEHOLDER}}, {{NODE_NAME}}, {{NODES}}, {{PROPERTY:KEY}}",
            "bad.yaml: spec.instanceObjects[0].metadata.namespace: set by the controller: objects"
                + " go into the Instance's namespace (none for cluster-scoped kinds), named after"
                + " the Instance, owned by it",
            "bad.yaml: spec.instanceObjects[0].metadata.name: must contain {{INSTANCE_NAME}}:"
                + " otherwise every Instance would write the same object",
            "bad.yaml: spec.instanceObjects[1].kind: required: a non-empty string",
            "bad.yaml: spec.instanceObjects[2]: must be an object (a Kubernetes manifest)",
            "bad.yaml: spec.instanceObjects[4].kind: the same Secret as instanceObjects[3]: give"
                + " each a different metadata.name");
  }

  @Test
  void notAListIsOneError() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse("one.yaml", configuration("instanceObjects: {kind: ConfigMap}"));
    assertThat(result.errors())
        .containsExactly("one.yaml: spec.instanceObjects must be a list of Kubernetes manifests");
  }

  @Test
  void theAgentServesTheDevicesAndOnlyWarnsOfTheControllersTemplates() {
    ConfigurationParser.Result result =
        new ConfigurationParser()
            .parse(
                "lenient.yaml",
                configuration(
                    "instanceObjects:\n  - {apiVersion: v1, kind: ConfigMap, data: {a: '{{X}}'}}"));
    assertThat(result.errors()).isEmpty();
    assertThat(result.configurations()).hasSize(1);
    assertThat(result.warnings())
        .singleElement()
        .asString()
        .startsWith("lenient.yaml: spec.instanceObjects[0].data.a: unknown placeholder {{X}}");
  }
}
