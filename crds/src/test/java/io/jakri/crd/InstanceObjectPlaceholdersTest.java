package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.crd.InstanceObjectPlaceholders.Problem;
import io.jakri.crd.InstanceObjectPlaceholders.Values;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceObjectPlaceholdersTest {

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  private static final Values VALUES =
      new Values(
          "cam-0a1b2c",
          "cam",
          "devices",
          List.of("node-a", "node-b"),
          Map.of("ONVIF_DEVICE_IP_ADDRESS", "10.0.0.7"));

  private Map<String, Object> yaml(String text) {
    return serialization.unmarshal(text, InstanceObjectTemplate.class).toMap();
  }

  @Test
  void rendersEveryPlaceholderInValuesAndKeysButNotInNumbers() throws Exception {
    Map<String, Object> t =
        yaml(
            """
            apiVersion: apps/v1
            kind: Deployment
            metadata:
              name: "{{INSTANCE_NAME}}-viewer"
              labels: {cfg: "{{CONFIGURATION_NAME}}"}
            spec:
              replicas: 2
              template:
                spec:
                  containers:
                  - name: v
                    image: busybox
                    args: ["{{PROPERTY:ONVIF_DEVICE_IP_ADDRESS}}", "{{NODES}}", "{{NODE_NAME}}", "ns={{NAMESPACE}}"]
                    resources: {limits: {"{{PLACEHOLDER}}": "1", "{{RESOURCE_NAME}}x": "2"}}
            """);
    Map<String, Object> out = InstanceObjectPlaceholders.render(t, VALUES);
    String json = serialization.asJson(out);
    assertThat(json)
        .contains("\"name\":\"cam-0a1b2c-viewer\"")
        .contains("\"cfg\":\"cam\"")
        .contains("\"replicas\":2")
        .contains("[\"10.0.0.7\",\"node-a,node-b\",\"node-a\",\"ns=devices\"]")
        .contains("\"akri.sh/cam-0a1b2c\":\"1\"")
        .contains("\"akri.sh/cam-0a1b2cx\":\"2\"")
        .doesNotContain("{{");
    assertThat(serialization.asJson(t)).contains("{{INSTANCE_NAME}}");
  }

  @Test
  void aTemplateWithoutNameGetsTheInstanceAndKindAndLongNamesAreCutWithAHash() throws Exception {
    Map<String, Object> out =
        InstanceObjectPlaceholders.render(yaml("apiVersion: v1\nkind: ConfigMap\n"), VALUES);
    assertThat(((Map<?, ?>) out.get("metadata")).get("name")).isEqualTo("cam-0a1b2c-configmap");
    String longName = InstanceObjectPlaceholders.defaultName("a".repeat(56) + "-0a1b2c", "Kind");
    assertThat(longName).hasSize(63).matches("a+-[0-9a-f]{10}");
    assertThat(InstanceObjectPlaceholders.defaultName("a".repeat(56) + "-0a1b2d", "Kind"))
        .isNotEqualTo(longName);
  }

  @Test
  void aMissingPropertyMakesTheTemplateUnrenderableForThatInstance() {
    assertThatThrownBy(
            () ->
                InstanceObjectPlaceholders.render(
                    yaml("apiVersion: v1\nkind: ConfigMap\ndata: {a: '{{PROPERTY:NOPE}}'}\n"),
                    VALUES))
        .isInstanceOf(InstanceObjectPlaceholders.Unrenderable.class)
        .hasMessage("{{PROPERTY:NOPE}}: the Instance has no property NOPE");
  }

  @Test
  void checkReportsEveryProblemWithItsPath() {
    List<Problem> problems =
        InstanceObjectPlaceholders.check(
            List.of(
                yaml(
                    """
                    apiVersion: v1
                    kind: ConfigMap
                    metadata:
                      name: fixed
                      namespace: other
                      labels: {akri.sh/instance: x}
                    data: {a: "{{INSTANCE}}", "{{PROPERTY:bad key}}": b}
                    status: {}
                    """),
                yaml("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: '{{INSTANCE_NAME}}_X'}\n"),
                yaml("apiVersion: ''\nkind: '{{NODES}}'\n"),
                yaml("apiVersion: v1\nkind: Secret\n"),
                yaml("apiVersion: v1\nkind: Secret\n")));
    assertThat(problems)
        .extracting(p -> p.index() + " " + p.path())
        .containsExactly(
            "0 data.a",
            "0 data.{{PROPERTY:bad key}}",
            "0 metadata.namespace",
            "0 metadata.name",
            "0 metadata.labels.akri.sh/instance",
            "0 status",
            "1 metadata.name",
            "2 apiVersion",
            "2 kind",
            "4 kind");
    assertThat(problems.get(0).message()).startsWith("unknown placeholder {{INSTANCE}}; known: ");
    assertThat(problems.get(3).message()).contains("must contain {{INSTANCE_NAME}}");
    assertThat(problems.get(6).message()).startsWith("not a valid object name once rendered");
    assertThat(problems.get(9).message()).contains("the same Secret as instanceObjects[3]");
  }

  @Test
  void aValidTemplateHasNoProblemsAndRoundTripsThroughTheModel() {
    String text =
        """
        apiVersion: example.com/v1
        kind: Widget
        metadata:
          name: "w-{{INSTANCE_NAME}}"
          labels: {team: a}
        spec: {port: 8080, on: true, items: [1, "x-{{NODE_NAME}}"]}
        """;
    Map<String, Object> t = yaml(text);
    assertThat(InstanceObjectPlaceholders.check(List.of(t))).isEmpty();
    InstanceObjectTemplate typed = serialization.unmarshal(text, InstanceObjectTemplate.class);
    InstanceObjectTemplate back =
        serialization.unmarshal(serialization.asJson(typed), InstanceObjectTemplate.class);
    assertThat(back).isEqualTo(typed);
    assertThat(serialization.asJson(typed))
        .startsWith("{\"apiVersion\":\"example.com/v1\",\"kind\":\"Widget\",\"metadata\":");
  }
}
