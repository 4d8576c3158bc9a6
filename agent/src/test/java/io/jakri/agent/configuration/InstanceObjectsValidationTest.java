package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.model.ConfigurationSpec;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code spec.instanceObjects} as {@code validate} (strict: every problem with its path and, read
 * from a file, its line and column), the admission webhook (strict, from maps: no positions) and
 * the agent (lenient: ignored) read it.
 */
public class InstanceObjectsValidationTest {

  /** The known placeholders, as an unknown one's message lists them. */
  public static final String KNOWN =
      "known: {{INSTANCE_NAME}}, {{CONFIGURATION_NAME}}, {{NAMESPACE}}, {{RESOURCE_NAME}},"
          + " {{PLACEHOLDER}}, {{NODE_NAME}}, {{NODES}}, {{PROPERTY:KEY}}";

  /** A Configuration whose spec ends with {@code specTail}, from line 9 on (column 3). */
  public static String configuration(String specTail) {
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

  /** Two templates: a Deployment and a ConfigMap without a name, as validate accepts them. */
  public static final String VALID =
      configuration(
          """
          instanceObjects:
            - apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: "{{INSTANCE_NAME}}-viewer"
                labels: {app: viewer}
              spec:
                selector: {matchLabels: {app: viewer}}
                template:
                  metadata: {labels: {app: viewer}}
                  spec:
                    containers:
                      - name: v
                        image: busybox
                        args: ["--ip", "{{PROPERTY:IP_ADDRESS}}"]
                        resources: {limits: {"{{PLACEHOLDER}}": "1"}}
            - apiVersion: v1
              kind: ConfigMap
              data: {nodes: "{{NODES}}", configuration: "{{CONFIGURATION_NAME}}"}
          """);

  /**
   * Five problems in four templates: an unknown placeholder (line 16), a namespace (line 14), a
   * fixed name (line 13), a missing kind (reported at its template, line 17) and the same Secret
   * twice (the second's kind, line 20).
   */
  public static final String SEVERAL =
      configuration(
          """
          instanceObjects:
            - apiVersion: v1
              kind: ConfigMap
              metadata:
                name: fixed
                namespace: elsewhere
              data:
                a: "{{INSTANCE}}"
            - apiVersion: v1
              metadata: {name: "{{INSTANCE_NAME}}-x"}
            - {apiVersion: v1, kind: Secret}
            - {apiVersion: v1, kind: Secret}
          """);

  public static final List<String> SEVERAL_PROBLEMS =
      List.of(
          "spec.instanceObjects[0].data.a (line 16, column 9): unknown placeholder {{INSTANCE}}; "
              + KNOWN,
          "spec.instanceObjects[0].metadata.namespace (line 14, column 9): set by the controller:"
              + " objects go into the Instance's namespace (none for cluster-scoped kinds), named"
              + " after the Instance, owned by it",
          "spec.instanceObjects[0].metadata.name (line 13, column 9): must contain"
              + " {{INSTANCE_NAME}}: otherwise every Instance would write the same object",
          "spec.instanceObjects[1].kind (line 17, column 7): required: a non-empty string",
          "spec.instanceObjects[3].kind (line 20, column 24): the same Secret as"
              + " instanceObjects[2]: give each a different metadata.name");

  @Test
  void validTemplatesPassAndTheFieldIsNotUnknown() {
    ConfigurationParser.Result result = new ConfigurationParser(true).parse("ok.yaml", VALID);

    assertThat(result.errors()).isEmpty();
    assertThat(result.warnings()).isEmpty();
    assertThat(result.configurations()).hasSize(1);
  }

  @Test
  void everyProblemOfEveryTemplateIsReportedInOnePassWithItsPathLineAndColumn() {
    ConfigurationParser.Result result = new ConfigurationParser(true).parse("bad.yaml", SEVERAL);

    assertThat(result.errors())
        .containsExactlyElementsOf(SEVERAL_PROBLEMS.stream().map(p -> "bad.yaml: " + p).toList());
    assertThat(result.configurations()).isEmpty();
  }

  @Test
  void inAFileOfSeveralDocumentsLinesCountFromTheStartOfTheFile() {
    String first = configuration("capacity: 1").replace("name: objects", "name: first");
    String text = "---\n" + first + "---\n---\n" + SEVERAL;

    ConfigurationParser.Result result = new ConfigurationParser(true).parse("two.yaml", text);

    int offset = 1 + (int) first.lines().count() + 2; // the two "---" before SEVERAL
    assertThat(result.errors())
        .hasSize(SEVERAL_PROBLEMS.size())
        .first()
        .isEqualTo(
            "two.yaml (document 2): spec.instanceObjects[0].data.a (line "
                + (16 + offset)
                + ", column 9): unknown placeholder {{INSTANCE}}; "
                + KNOWN);
    assertThat(result.configurations()).hasSize(1);
  }

  @Test
  void aStringEntryIsOneError() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse(
                "string.yaml",
                configuration(
                    """
                    instanceObjects:
                      - {apiVersion: v1, kind: ConfigMap}
                      - just a string
                    """));

    assertThat(result.errors())
        .containsExactly(
            "string.yaml: spec.instanceObjects[1] (line 11, column 7): must be an object (a"
                + " Kubernetes manifest)");
  }

  @Test
  void notAListIsOneError() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse("one.yaml", configuration("instanceObjects: {kind: ConfigMap}"));

    assertThat(result.errors())
        .containsExactly(
            "one.yaml: spec.instanceObjects (line 9, column 3): must be a list of Kubernetes"
                + " manifests, not a mapping");
  }

  @Test
  void aNameWithADottedLabelKeyIsFoundAndAMissingFieldFallsBackToItsParent() {
    ConfigurationParser.Result result =
        new ConfigurationParser(true)
            .parse(
                "labels.yaml",
                configuration(
                    """
                    instanceObjects:
                      - apiVersion: v1
                        kind: ConfigMap
                        metadata:
                          labels:
                            akri.sh/instance: x
                      - {}
                    """));

    assertThat(result.errors())
        .containsExactly(
            "labels.yaml: spec.instanceObjects[0].metadata.labels.akri.sh/instance (line 14,"
                + " column 11): set by the controller; leave it out",
            "labels.yaml: spec.instanceObjects[1].apiVersion (line 15, column 7): required: a"
                + " non-empty string",
            "labels.yaml: spec.instanceObjects[1].kind (line 15, column 7): required: a non-empty"
                + " string");
  }

  @Test
  void theWebhooksDocumentOfMapsGetsTheSameProblemsWithoutPositions() {
    Object document = new Yaml().load(SEVERAL);

    ConfigurationParser.Result result =
        new ConfigurationParser(true).check("configuration default/objects", document);

    assertThat(result.errors())
        .containsExactlyElementsOf(
            SEVERAL_PROBLEMS.stream()
                .map(p -> "configuration default/objects: " + p.replaceAll(" \\(line.*?\\)", ""))
                .toList());
  }

  @Test
  void theAgentIgnoresInstanceObjectsWhateverTheyHold() {
    for (String tail :
        List.of(
            "instanceObjects:\n  - {apiVersion: v1, kind: ConfigMap, data: {a: '{{X}}'}}",
            "instanceObjects: [just a string, 3, {kind: ''}]",
            "instanceObjects: {not: a list}",
            "instanceObjects: 7")) {
      ConfigurationParser.Result result =
          new ConfigurationParser().parse("lenient.yaml", configuration(tail));

      assertThat(result.errors()).as(tail).isEmpty();
      assertThat(result.warnings()).as(tail).isEmpty();
      assertThat(result.configurations()).as(tail).hasSize(1);
    }
  }

  @Test
  void aChangeOnlyInInstanceObjectsIsNoChangeToTheAgent() {
    ConfigurationSpec before =
        new ConfigurationParser().parse("a.yaml", VALID).configurations().get(0);
    ConfigurationSpec after =
        new ConfigurationParser()
            .parse("a.yaml", VALID.replace("{{NODES}}", "{{NODE_NAME}}"))
            .configurations()
            .get(0);

    assertThat(after).isEqualTo(before);
    assertThat(after.discoveryDiffers(before)).isFalse();
  }

  @Test
  void positionsOfPathsNotInTheDocumentFallBackOrAreEmpty() {
    YamlPositions positions = new YamlPositions("a:\n  b: [x, {c: 1}]\n", 40);
    YamlPositions.Document doc = positions.document(0);

    assertThat(doc.at("a.b[1].c")).isEqualTo(" (line 2, column 11)");
    assertThat(doc.at("a.b[1].d")).isEqualTo(" (line 2, column 10)");
    assertThat(doc.at("a.b[7]")).isEqualTo(" (line 2, column 3)");
    assertThat(doc.at("a.b.x")).isEqualTo(" (line 2, column 3)");
    assertThat(doc.at("z")).isEmpty();
    assertThat(positions.document(3).at("a")).isEmpty();
    assertThat(YamlPositions.NONE.at("a")).isEmpty();
  }
}
