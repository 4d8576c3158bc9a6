package io.jakri.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.assertj.core.api.SoftAssertions;
import org.junit.jupiter.api.Test;
import org.yaml.snakeyaml.LoaderOptions;
import org.yaml.snakeyaml.Yaml;
import org.yaml.snakeyaml.constructor.SafeConstructor;

/**
 * Checks every manifest under {@code ../examples} and {@code deploy/} (relative to the module
 * directory, the tests' working directory): what {@code kubectl apply} and the CRD's validation
 * would reject, plus the broker conventions of the controller.
 */
class ExamplesTest {

  private static final Path EXAMPLES = Path.of("..", "examples");
  private static final Path DEPLOY = Path.of("deploy");
  private static final String PLACEHOLDER = "{{PLACEHOLDER}}";
  private static final String BROKER_IMAGE = "jakri/broker-template:0.1.0";
  private static final Pattern DNS_LABEL = Pattern.compile("[a-z0-9]([-a-z0-9]*[a-z0-9])?");
  private static final Pattern EXTENDED_RESOURCE =
      Pattern.compile("[a-z0-9]([-a-z0-9.]*[a-z0-9])?/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?");
  private static final Map<String, Set<String>> HANDLER_KEYS =
      Map.of(
          "simulated",
          Set.of(
              "count",
              "idPrefix",
              "descriptions",
              "resourceName",
              "properties",
              "shared",
              "envPrefix",
              "annotationPrefix",
              "deviceFilePrefix"),
          "static",
          Set.of("deviceMapping"),
          "zeroconf",
          Set.of("kind", "name", "domain", "port", "txtRecords", "interfaces"),
          "mqtt",
          Set.of(
              "brokers",
              "mode",
              "prefix",
              "components",
              "topics",
              "id",
              "properties",
              "manufacturers",
              "models",
              "maxDevices",
              "maxPayloadBytes",
              "gracePeriod"),
          "opcua",
          Set.of("opcuaDiscoveryMethod", "applicationNames", "pollIntervalSeconds"),
          "onvif",
          Set.of(
              "ipAddresses",
              "macAddresses",
              "scopes",
              "uuids",
              "discoveryTimeoutSeconds",
              "probeType",
              "interfaces",
              "discoveryIntervalSeconds"),
          "udev",
          Set.of("udevRules", "groupRecursive", "permissions", "rescanIntervalSeconds"),
          "coap",
          Set.of(
              "rt",
              "if",
              "paths",
              "hosts",
              "port",
              "multicast",
              "networkInterfaces",
              "discoveryIntervalSeconds",
              "gracePeriodSeconds",
              "responseTimeoutMillis"),
          "modbus",
          Set.of(
              "addresses",
              "ports",
              "unitIds",
              "eachUnit",
              "vendor",
              "productCode",
              "revision",
              "maxAddresses",
              "scanIntervalSeconds",
              "gracePeriodSeconds",
              "connectionsPerSecond",
              "timeoutMillis"));

  private record Doc(Path file, int index, Map<String, Object> body) {
    String where() {
      return file + " document " + index;
    }
  }

  @Test
  void everyScenarioHasADirectoryWithAReadmeAndIsListedInTheIndex() throws IOException {
    String index = Files.readString(EXAMPLES.resolve("README.md"));
    for (String scenario :
        List.of(
            "zeroconf",
            "opcua",
            "spookd",
            "simple-device",
            "debug-echo",
            "udev",
            "onvif",
            "coap",
            "modbus",
            "instance-objects",
            "node-labels")) {
      assertThat(EXAMPLES.resolve(scenario).resolve("README.md")).isRegularFile();
      assertThat(yamlFiles(EXAMPLES.resolve(scenario))).isNotEmpty();
      assertThat(index).contains("(" + scenario + "/)");
    }
  }

  @Test
  void everyDocumentHasApiVersionKindAndName() throws IOException {
    List<Doc> docs = allDocs();
    assertThat(docs).hasSizeGreaterThanOrEqualTo(8);
    SoftAssertions softly = new SoftAssertions();
    for (Doc doc : docs) {
      softly.assertThat(doc.body().get("apiVersion")).as(doc.where()).isInstanceOf(String.class);
      softly.assertThat(doc.body().get("kind")).as(doc.where()).isInstanceOf(String.class);
      softly.assertThat(string(map(doc.body(), "metadata"), "name")).as(doc.where()).isNotBlank();
    }
    softly.assertAll();
  }

  @Test
  void everyConfigurationIsAValidV0Configuration() throws IOException {
    List<Doc> configurations = configurations();
    assertThat(configurations).hasSizeGreaterThanOrEqualTo(5);
    SoftAssertions softly = new SoftAssertions();
    for (Doc doc : configurations) {
      String where = doc.where();
      String name = string(map(doc.body(), "metadata"), "name");
      softly.assertThat(doc.body().get("apiVersion")).as(where).isEqualTo("akri.sh/v0");
      softly.assertThat(name.length()).as(where + " name length").isLessThanOrEqualTo(56);
      softly.assertThat(name).as(where + " name").matches(DNS_LABEL);
      Map<String, Object> spec = map(doc.body(), "spec");
      Object capacity = spec.getOrDefault("capacity", 1);
      softly.assertThat(capacity).as(where + " capacity").isInstanceOf(Integer.class);
      if (capacity instanceof Integer c) {
        softly.assertThat(c).as(where + " capacity").isGreaterThanOrEqualTo(1);
      }
      Map<String, Object> handler = map(spec, "discoveryHandler");
      String handlerName = string(handler, "name");
      softly.assertThat(handlerName).as(where + " handler").isNotBlank();
      Object details = parseYaml(string(handler, "discoveryDetails"));
      softly.assertThat(details).as(where + " discoveryDetails").isInstanceOf(Map.class);
      Set<String> known =
          HANDLER_KEYS.get(handlerName.equals("debugEcho") ? "simulated" : handlerName);
      softly.assertThat(known).as(where + " handler is a bundled one").isNotNull();
      if (known != null && details instanceof Map<?, ?> d) {
        softly.assertThat(known).as(where + " discoveryDetails keys").containsAll(keys(d));
      }
      if (spec.containsKey("brokerSpec")) {
        Map<String, Object> brokerSpec = map(spec, "brokerSpec");
        softly
            .assertThat(
                Stream.of("brokerPodSpec", "brokerJobSpec").filter(brokerSpec::containsKey).count())
            .as(where + " broker kinds")
            .isEqualTo(1);
      }
      for (String service : List.of("instanceServiceSpec", "configurationServiceSpec")) {
        if (spec.containsKey(service)) {
          softly.assertThat(map(spec, service)).as(where + " " + service).containsKey("ports");
          softly
              .assertThat(map(spec, service))
              .as(where + " " + service + " (the controller sets the selector)")
              .doesNotContainKey("selector");
        }
      }
    }
    softly.assertAll();
  }

  @Test
  void everyBrokerContainerRequestsItsDeviceThroughThePlaceholder() throws IOException {
    List<Map<String, Object>> containers = new ArrayList<>();
    SoftAssertions softly = new SoftAssertions();
    for (Doc doc : configurations()) {
      Map<String, Object> brokerSpec = map(map(doc.body(), "spec"), "brokerSpec");
      if (!brokerSpec.containsKey("brokerPodSpec")) {
        continue;
      }
      for (Map<String, Object> container : list(map(brokerSpec, "brokerPodSpec"), "containers")) {
        containers.add(container);
        String where = doc.where() + " container " + container.get("name");
        Map<String, Object> resources = map(container, "resources");
        Map<String, Object> limits = map(resources, "limits");
        softly.assertThat(limits).as(where + " limits").containsEntry(PLACEHOLDER, "1");
        Map<String, Object> requests = map(resources, "requests");
        if (requests.containsKey(PLACEHOLDER)) {
          softly
              .assertThat(requests.get(PLACEHOLDER))
              .as(where + " requests equal limits")
              .isEqualTo(limits.get(PLACEHOLDER));
        }
        softly.assertThat(container.get("image")).as(where + " image").isEqualTo(BROKER_IMAGE);
      }
    }
    softly.assertAll();
    assertThat(containers).hasSizeGreaterThanOrEqualTo(3);
  }

  @Test
  void workloadsRequestDevicesByValidExtendedResourceNames() throws IOException {
    SoftAssertions softly = new SoftAssertions();
    int requested = 0;
    for (Doc doc : allDocs()) {
      Map<String, Object> podSpec =
          switch (String.valueOf(doc.body().get("kind"))) {
            case "Pod" -> map(doc.body(), "spec");
            case "Deployment" -> map(map(map(doc.body(), "spec"), "template"), "spec");
            default -> Map.of();
          };
      for (Map<String, Object> container : list(podSpec, "containers")) {
        Map<String, Object> limits = map(map(container, "resources"), "limits");
        for (String resource : keys(limits)) {
          if (resource.contains("/")) {
            requested++;
            softly.assertThat(resource).as(doc.where()).matches(EXTENDED_RESOURCE);
            softly.assertThat(limits.get(resource)).as(doc.where()).isInstanceOf(String.class);
          }
        }
      }
    }
    softly.assertAll();
    assertThat(requested).isGreaterThanOrEqualTo(4);
  }

  @Test
  void seedScenariosUseTheSameHandlerDetailsAsTheAgentsBundledDemos() throws IOException {
    Path demos = Path.of("..", "agent", "src", "main", "resources", "demo");
    assertThat(details(EXAMPLES.resolve("spookd/configuration.yaml")))
        .isEqualTo(details(demos.resolve("spookd.yaml")));
    assertThat(details(EXAMPLES.resolve("debug-echo/configuration.yaml")))
        .isEqualTo(details(demos.resolve("akri-debug-echo-foo.yaml")));
  }

  private static Object details(Path file) throws IOException {
    Map<String, Object> body = docs(file).get(0).body();
    return parseYaml(string(map(map(body, "spec"), "discoveryHandler"), "discoveryDetails"));
  }

  private static List<Doc> configurations() throws IOException {
    return allDocs().stream().filter(d -> "Configuration".equals(d.body().get("kind"))).toList();
  }

  private static List<Doc> allDocs() throws IOException {
    List<Doc> docs = new ArrayList<>();
    for (Path file : yamlFiles(EXAMPLES)) {
      docs.addAll(docs(file));
    }
    for (Path file : yamlFiles(DEPLOY)) {
      docs.addAll(docs(file));
    }
    return docs;
  }

  private static List<Path> yamlFiles(Path dir) throws IOException {
    try (Stream<Path> files = Files.walk(dir)) {
      return files
          .filter(Files::isRegularFile)
          .filter(f -> f.toString().endsWith(".yaml") || f.toString().endsWith(".yml"))
          .sorted()
          .toList();
    }
  }

  @SuppressWarnings("unchecked")
  private static List<Doc> docs(Path file) throws IOException {
    List<Doc> docs = new ArrayList<>();
    int index = 0;
    for (Object doc : yaml().loadAll(Files.readString(file))) {
      if (doc != null) {
        assertThat(doc).as(file + " document " + index).isInstanceOf(Map.class);
        docs.add(new Doc(file, index, (Map<String, Object>) doc));
      }
      index++;
    }
    return docs;
  }

  private static Object parseYaml(String text) {
    return yaml().load(text);
  }

  private static Yaml yaml() {
    LoaderOptions options = new LoaderOptions();
    options.setAllowDuplicateKeys(false);
    return new Yaml(new SafeConstructor(options));
  }

  @SuppressWarnings("unchecked")
  private static Map<String, Object> map(Map<String, Object> parent, String key) {
    Object value = parent.get(key);
    return value instanceof Map<?, ?> m ? (Map<String, Object>) m : Map.of();
  }

  @SuppressWarnings("unchecked")
  private static List<Map<String, Object>> list(Map<String, Object> parent, String key) {
    Object value = parent.get(key);
    return value instanceof List<?> l ? (List<Map<String, Object>>) l : List.of();
  }

  private static String string(Map<String, Object> parent, String key) {
    Object value = parent.get(key);
    return value instanceof String s ? s : "";
  }

  private static List<String> keys(Map<?, ?> map) {
    return map.keySet().stream().map(String::valueOf).toList();
  }
}
