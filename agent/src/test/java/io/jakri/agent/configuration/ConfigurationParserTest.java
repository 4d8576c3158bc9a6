package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.model.ConfigurationSpec;
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
                  containers: [{name: broker, image: "nginx:stable-alpine"}]
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
            "bad.yaml (document 2): metadata.name \"Not_Valid\" must be a DNS-1123 label:"
                + " lower-case letters, digits and '-' (no '.'), starting and ending with a"
                + " letter or digit",
            "bad.yaml (document 3): spec.discoveryHandler.discoveryProperties[0] must have exactly"
                + " one of value and valueFrom",
            "bad.yaml (document 3): spec.brokerSpec must have exactly one of brokerPodSpec and"
                + " brokerJobSpec");
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

  @Test
  void yamlSyntaxErrorsNameTheLineAndColumn() {
    String text =
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: broken
        spec:
          discoveryHandler: {name: simulated
          capacity: 1
        """;
    assertThat(parser.parse("broken.yaml", text).errors())
        .singleElement()
        .asString()
        .matches("broken\\.yaml: invalid YAML: line [67], column \\d+: .+")
        .doesNotContain("\n");
  }

  @Test
  void everyProblemOfEveryDocumentIsReportedNotOnlyTheFirst() {
    ConfigurationParser.Result result =
        parser.parse(
            "many.yaml",
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: Bad_Name
            spec:
              discoveryHandler:
                name: ""
                discoveryProperties:
                  - name: a
                  - name: b
                    value: x
                  - value: y
              capacity: 0
              brokerProperties: {A: [1]}
              brokerSpec: {}
            ---
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata: {name: second}
            spec:
              discoveryHandler: {name: simulated}
              capacity: many
            """);
    assertThat(result.configurations()).isEmpty();
    assertThat(result.errors())
        .containsExactly(
            "many.yaml (document 1): metadata.name \"Bad_Name\" must be a DNS-1123 label:"
                + " lower-case letters, digits and '-' (no '.'), starting and ending with a"
                + " letter or digit",
            "many.yaml (document 1): spec.discoveryHandler.name is required",
            "many.yaml (document 1): spec.discoveryHandler.discoveryProperties[0] must have"
                + " exactly one of value and valueFrom",
            "many.yaml (document 1): spec.discoveryHandler.discoveryProperties[2].name is"
                + " required",
            "many.yaml (document 1): spec.capacity must be at least 1 but is 0",
            "many.yaml (document 1): spec.brokerProperties.A must be a string",
            "many.yaml (document 1): spec.brokerSpec must have exactly one of brokerPodSpec and"
                + " brokerJobSpec",
            "many.yaml (document 2): spec.capacity must be an integer");
  }

  @Test
  void unknownDiscoveryHandlerFieldsAreWarningsNamingThem() {
    ConfigurationParser.Result result =
        parser.parse(
            "typo.yaml",
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata: {name: typo}
            spec:
              discoveryHandler:
                name: simulated
                discoveryDetail: "count: 3"
            """);
    assertThat(result.errors()).isEmpty();
    assertThat(result.warnings())
        .containsExactly("typo.yaml: unknown field spec.discoveryHandler.discoveryDetail ignored");
  }

  @Test
  void anEmptyFileOrOneOfOnlyCommentsIsAnError() {
    assertThat(parser.parse("empty.yaml", "").errors())
        .containsExactly("empty.yaml: no Configuration in it (the file is empty or only comments)");
    assertThat(parser.parse("comments.yaml", "# nothing here\n---\n# nor here\n").errors())
        .containsExactly(
            "comments.yaml: no Configuration in it (the file is empty or only comments)");
  }

  @Test
  void aCapacityBeyondTheIntegerRangeIsTooLargeNotANonInteger() {
    assertThat(parser.parse("big.yaml", withCapacity("2147483648")).errors())
        .containsExactly(
            "big.yaml: spec.capacity 2147483648 is too large: it must be at most 1000000");
    assertThat(parser.parse("huge.yaml", withCapacity("99999999999999999999999")).errors())
        .singleElement()
        .asString()
        .contains("is too large");
    assertThat(parser.parse("frac.yaml", withCapacity("1.5")).errors())
        .containsExactly("frac.yaml: spec.capacity must be an integer");
  }

  @Test
  void aCapacityWhoseListAndWatchMessageTheKubeletWouldRefuseIsAnError() {
    int largestFitting = largestCapacityThatFits("fits");
    assertThat(parser.parse("ok.yaml", withCapacity(String.valueOf(largestFitting))).errors())
        .isEmpty();
    assertThat(parser.parse("no.yaml", withCapacity(String.valueOf(largestFitting + 1))).errors())
        .singleElement()
        .asString()
        .startsWith("no.yaml: spec.capacity " + (largestFitting + 1) + " is too large")
        .contains("more than the kubelet accepts (4194304 bytes)");
  }

  @Test
  void theListAndWatchSizeIsTheSizeOfTheRealMessage() {
    String instance = "fits-" + "a".repeat(6);
    for (int slots : new int[] {1, 9, 10, 11, 100, 1234}) {
      io.jakri.kubelet.v1beta1.ListAndWatchResponse.Builder response =
          io.jakri.kubelet.v1beta1.ListAndWatchResponse.newBuilder();
      for (int n = 0; n < slots; n++) {
        response.addDevices(
            io.jakri.kubelet.v1beta1.Device.newBuilder()
                .setID(instance + "-" + n)
                .setHealth("Unhealthy"));
      }
      assertThat(ConfigurationParser.listAndWatchBytes(instance.length(), slots))
          .as("%d slots", slots)
          .isEqualTo(response.build().getSerializedSize());
    }
  }

  private static int largestCapacityThatFits(String name) {
    int low = 1;
    int high = ConfigurationParser.MAX_CAPACITY;
    while (low < high) {
      int mid = (low + high + 1) / 2;
      if (ConfigurationParser.listAndWatchProblem(name, mid).isEmpty()) {
        low = mid;
      } else {
        high = mid - 1;
      }
    }
    return low;
  }

  private static String withCapacity(String capacity) {
    return """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata: {name: fits}
        spec:
          discoveryHandler: {name: simulated}
          capacity: %s
        """
        .formatted(capacity);
  }
}
