package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.LintResult;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.yaml.snakeyaml.Yaml;

/**
 * {@code jakri/values.schema.json}, which Helm checks on install, upgrade, template and lint:
 * unknown keys and wrong types are refused with the key named, every value of values.yaml and of
 * the templates is declared, and the objects users pass through to Kubernetes stay open.
 */
class ValuesSchemaTest {

  static final Path SCHEMA = RenderedChart.CHART.resolve("values.schema.json");

  static TemplateCommand template() {
    return new Helm(RenderedChart.CHART)
        .template()
        .withName(RenderedChart.RELEASE)
        .withNamespace(RenderedChart.NAMESPACE);
  }

  /** The parsed schema (JSON is YAML). */
  static Map<String, Object> schema() throws IOException {
    return map(new Yaml().load(Files.readString(SCHEMA)));
  }

  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "agent.udev.enabld, true, /agent/udev, enabld",
    "agnt.enabled, true, '', agnt",
    "controller.metrics.prot, 9000, /controller/metrics, prot",
    "handlers.udev.broker.knd, pod, /handlers/udev/broker, knd",
    "debugEcho.configuration.brokerPod.imag.repository, nginx,"
        + " /debugEcho/configuration/brokerPod, imag",
    "udev.configuration.discoveryDetails.udevRule[0], x, /udev/configuration/discoveryDetails,"
        + " udevRule",
    "uninstallHook.image.tg, 1, /uninstallHook/image, tg",
    "podMonitor.label.release, x, /podMonitor, label",
    "prometheus.enable, true, /prometheus, enable",
  })
  void unknownKeysAreRefusedNamingTheKey(String key, String value, String at, String unknown) {
    assertThatThrownBy(() -> template().set(key, value).call())
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining("at '" + at + "'")
        .hasMessageContaining("additional properties '" + unknown + "' not allowed");
  }

  @ParameterizedTest(name = "{0}={1}")
  @CsvSource({
    "agent.resources.memoryLimit, true, /agent/resources/memoryLimit",
    "controller.resources.cpuRequest, false, /controller/resources/cpuRequest",
    "agent.tidyNode, yes, /agent/tidyNode",
    "agent.metrics.port, abc, /agent/metrics/port",
    "watchNamespaces, team-a, /watchNamespaces",
    "handlers.static.capacity, two, /handlers/static/capacity",
    "handlers.zeroconf.broker.kind, deployment, /handlers/zeroconf/broker/kind",
    "agent.nodeSelector.zone, 1, /agent/nodeSelector/zone",
    "agent.podAnnotations.checked, true, /agent/podAnnotations/checked",
    "udev.configuration.discoveryDetails.udevRules, x, /udev/configuration/discoveryDetails/udevRules",
    "onvif.configuration.discoveryDetails.ipAddresses.action, Maybe,"
        + " /onvif/configuration/discoveryDetails/ipAddresses/action",
    "debugEcho.configuration.brokerJob.restartPolicy, Always,"
        + " /debugEcho/configuration/brokerJob/restartPolicy",
    "agent.tolerations.key, x, /agent/tolerations",
  })
  void wrongTypesAreRefusedNamingTheKey(String key, String value, String at) {
    assertThatThrownBy(() -> template().set(key, value).call())
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining("at '" + at + "'");
  }

  /** helm lint checks the chart's own values.yaml: a copy with a mistyped value fails it. */
  @Test
  void lintChecksTheChartsOwnValuesAgainstTheSchema(@TempDir Path workDir) throws IOException {
    Path copy = workDir.resolve("jakri");
    try (Stream<Path> files = Files.walk(RenderedChart.CHART)) {
      for (Path from : files.toList()) {
        Path to = copy.resolve(RenderedChart.CHART.relativize(from).toString());
        if (Files.isDirectory(from)) {
          Files.createDirectories(to);
        } else {
          Files.copy(from, to);
        }
      }
    }
    Path values = copy.resolve("values.yaml");
    String text = Files.readString(values);
    assertThat(text).contains("  tidyNode: true\n");
    Files.writeString(values, text.replace("  tidyNode: true\n", "  tidyNode: \"yes\"\n"));

    LintResult result = new Helm(copy).lint().strict().call();

    assertThat(result.isFailed()).isTrue();
    assertThat(result.getMessages()).anyMatch(m -> m.contains("at '/agent/tidyNode'"));
  }

  @Test
  void everyKeyOfValuesYamlIsDeclared() throws IOException {
    Map<String, Object> values =
        map(new Yaml().load(Files.readString(RenderedChart.CHART.resolve("values.yaml"))));
    List<String> undeclared = new ArrayList<>();
    walk("", values, schema(), schema(), undeclared);
    assertThat(undeclared).isEmpty();
  }

  /**
   * Every {@code .Values.a.b.c} the templates read is declared (leading keys; the templates' {@code
   * index}/{@code dig} reads of Akri's values are rendered by AkriValuesTest and
   * AkriChartValuesTest).
   */
  @Test
  void everyValueTheTemplatesReadIsDeclared() throws IOException {
    Map<String, Object> schema = schema();
    TreeSet<String> read = new TreeSet<>();
    Pattern values = Pattern.compile("\\.Values((?:\\.[A-Za-z][A-Za-z0-9_]*)+)");
    try (Stream<Path> files = Files.list(RenderedChart.CHART.resolve("templates"))) {
      for (Path file : files.toList()) {
        Matcher m = values.matcher(Files.readString(file));
        while (m.find()) {
          read.add(m.group(1).substring(1));
        }
      }
    }
    assertThat(read).hasSizeGreaterThan(60);
    List<String> undeclared = new ArrayList<>();
    for (String path : read) {
      Object at = schema;
      for (String step : path.split("\\.")) {
        at = property(schema, at, step);
        if (at == null) {
          undeclared.add(path);
          break;
        }
      }
    }
    assertThat(undeclared).isEmpty();
  }

  @Test
  void everyValuesFileOfTheTestsIsAccepted() throws IOException {
    List<String> refused = new ArrayList<>();
    try (Stream<Path> files = Files.walk(RenderedChart.VALUES)) {
      for (Path file : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        String name = RenderedChart.VALUES.relativize(file).toString();
        if (name.startsWith("akri/") || name.equals("bad-log-format.yaml")) {
          continue; // AkriValuesTest (REFUSED), LogFormatTest
        }
        try {
          template().withValuesFile(file).call();
        } catch (RuntimeException e) {
          refused.add(name + ": " + e.getMessage());
        }
      }
    }
    assertThat(refused).isEmpty();
  }

  @Test
  void objectsPassedToKubernetesStayOpen() {
    String anti =
        "agent.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].";
    RenderedChart chart =
        RenderedChart.parse(
            template()
                .set("agent.resources.limits.example\\.com/gpu", "1")
                .set(anti + "weight", "1")
                .set(anti + "podAffinityTerm.topologyKey", "kubernetes.io/hostname")
                .set("agent.tolerations[0].operator", "Exists")
                .set("agent.extraEnv[0].name", "EXTRA")
                .set("agent.extraEnv[0].value", "1")
                .set("agent.podAnnotations.example\\.com/note", "kept")
                .set("handlers.static.enabled", "true")
                .set("handlers.static.broker.enabled", "true")
                .set("handlers.static.broker.podSpec.hostNetwork", "true")
                .set("handlers.static.broker.podSpec.containers[0].name", "b")
                .set("handlers.static.broker.podSpec.containers[0].image", "busybox")
                .call());
    Map<String, Object> pod = map(get(chart.one("DaemonSet", "jakri-agent"), "spec", "template"));
    Map<String, Object> agent = map(get(pod, "spec", "containers", 0));
    assertThat(get(agent, "resources", "limits", "example.com/gpu")).isEqualTo(1);
    assertThat(get(pod, "spec", "affinity", "podAntiAffinity")).isNotNull();
    assertThat(get(pod, "spec", "tolerations", 0, "operator")).isEqualTo("Exists");
    assertThat(RenderedChart.maps(agent.get("env"))).anyMatch(e -> "EXTRA".equals(e.get("name")));
    assertThat(get(pod, "metadata", "annotations", "example.com/note")).isEqualTo("kept");
    assertThat(
            get(
                chart.one("Configuration", "static-devices"),
                "spec",
                "brokerSpec",
                "brokerPodSpec",
                "hostNetwork"))
        .isEqualTo(true);
  }

  /** Follows values.yaml into the schema, reporting keys the schema does not declare. */
  private static void walk(
      String at, Object value, Object node, Map<String, Object> root, List<String> undeclared) {
    if (!(value instanceof Map<?, ?> m)) {
      return;
    }
    for (Map.Entry<?, ?> e : m.entrySet()) {
      String key = String.valueOf(e.getKey());
      Object child = property(root, node, key);
      if (child == null) {
        undeclared.add(at + "/" + key);
      } else if (isClosed(root, child)) {
        walk(at + "/" + key, e.getValue(), child, root, undeclared);
      }
    }
  }

  /** The schema of property {@code key} of {@code node} ($ref followed), or null. */
  static Object property(Map<String, Object> root, Object node, String key) {
    Map<String, Object> resolved = resolve(root, node);
    Object props = resolved.get("properties");
    if (props instanceof Map<?, ?> p && p.containsKey(key)) {
      return resolve(root, p.get(key));
    }
    Object additional = resolved.get("additionalProperties");
    return additional instanceof Map<?, ?>
        ? resolve(root, additional)
        : isClosed(root, resolved) ? null : Map.of();
  }

  static boolean isClosed(Map<String, Object> root, Object node) {
    return Boolean.FALSE.equals(resolve(root, node).get("additionalProperties"));
  }

  static Map<String, Object> resolve(Map<String, Object> root, Object node) {
    Map<String, Object> n = map(node);
    Object ref = n.get("$ref");
    if (ref instanceof String r) {
      return map(get(root, "definitions", r.substring("#/definitions/".length())));
    }
    return n;
  }
}
