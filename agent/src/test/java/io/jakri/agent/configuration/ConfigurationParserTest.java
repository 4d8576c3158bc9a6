package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

class ConfigurationParserTest {

  private final ConfigurationParser parser = new ConfigurationParser();

  @Test
  void readsAnAkriConfiguration() {
    ConfigurationParser.Result result =
        parser.parse(
            "f.yaml",
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: akri-debug-echo-foo
            spec:
              discoveryHandler:
                name: debugEcho
                discoveryDetails: |
                  descriptions: [foo0]
                discoveryProperties:
                  - name: token
                    value: abc
              capacity: 2
              brokerSpec:
                brokerPodSpec:
                  containers: []
              brokerProperties:
                A: b
            """);
    assertThat(result.errors()).isEmpty();
    ConfigurationSpec spec = result.configurations().get(0);
    assertThat(spec.name()).isEqualTo("akri-debug-echo-foo");
    assertThat(spec.handlerName()).isEqualTo("debugEcho");
    assertThat(spec.discoveryDetails()).contains("foo0");
    assertThat(spec.capacity()).isEqualTo(2);
    assertThat(spec.brokerProperties()).containsEntry("A", "b");
    assertThat(spec.brokerSpecKind()).contains("brokerPodSpec");
    assertThat(spec.discoveryProperties()).hasSize(1);
  }

  @Test
  void everyProblemNamesTheSourceAndField() {
    ConfigurationParser.Result result =
        parser.parse(
            "bad.yaml",
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: ok-name
            spec:
              discoveryHandler:
                name: simulated
              capacity: 0
            ---
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: Not_Valid
            spec:
              discoveryHandler:
                name: simulated
            ---
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: two-brokers
            spec:
              discoveryHandler:
                name: simulated
                discoveryProperties:
                  - name: p
              brokerSpec:
                brokerPodSpec: {}
                brokerJobSpec: {}
            """);
    assertThat(result.configurations()).isEmpty();
    assertThat(result.errors())
        .containsExactly(
            "bad.yaml (document 1): spec.capacity must be at least 1 but is 0",
            "bad.yaml (document 2): metadata.name \"Not_Valid\" must consist of lower-case"
                + " letters, digits, '-' and '.', and start and end with a letter or digit",
            "bad.yaml (document 3): spec.discoveryHandler.discoveryProperties[0] must have exactly"
                + " one of value and valueFrom");
  }

  @Test
  void namesTooLongForAResourceNameAreRejected() {
    assertThat(ConfigurationParser.nameProblem("a".repeat(57))).isPresent();
    assertThat(ConfigurationParser.nameProblem("a".repeat(56))).isEmpty();
  }

  @Test
  void yamlAttacksAreRejectedWithAMessage() {
    String laughs =
        """
        a: &a ["x","x","x","x","x","x","x","x","x"]
        b: &b [*a,*a,*a,*a,*a,*a,*a,*a,*a]
        c: &c [*b,*b,*b,*b,*b,*b,*b,*b,*b]
        d: &d [*c,*c,*c,*c,*c,*c,*c,*c,*c]
        e: &e [*d,*d,*d,*d,*d,*d,*d,*d,*d]
        f: &f [*e,*e,*e,*e,*e,*e,*e,*e,*e]
        """;
    assertThat(parser.parse("laughs.yaml", laughs).errors())
        .singleElement()
        .asString()
        .startsWith("laughs.yaml: invalid YAML");
    assertThat(parser.parse("tag.yaml", "!!javax.script.ScriptEngineManager [x]").errors())
        .singleElement()
        .asString()
        .startsWith("tag.yaml: invalid YAML");
    assertThat(parser.parse("deep.yaml", "[".repeat(100) + "]".repeat(100)).errors())
        .singleElement()
        .asString()
        .startsWith("deep.yaml: invalid YAML");
  }

  @Test
  void unknownSpecFieldsAreWarnings() {
    ConfigurationParser.Result result =
        parser.parse(
            "w.yaml",
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata: {name: w}
            spec:
              discoveryHandler: {name: simulated}
              capcity: 3
            """);
    assertThat(result.errors()).isEmpty();
    assertThat(result.warnings()).containsExactly("w.yaml: unknown field spec.capcity ignored");
  }
}
