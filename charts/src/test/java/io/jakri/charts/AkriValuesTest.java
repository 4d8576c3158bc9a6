package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.map;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

import com.marcnuri.helm.Helm;
import com.marcnuri.helm.TemplateCommand;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

/**
 * Akri's chart values give the same Configurations in jakri's chart as in Akri's: both charts are
 * rendered with the same values (Akri's own lint values and the install commands of Akri's
 * documentation) and every Configuration's name and spec are compared field by field, {@code
 * discoveryDetails} as parsed YAML. Akri's chart is its Chart.yaml, values.yaml and five
 * Configuration templates at commit 604bdcb6, copied into {@code src/test/resources/akri-chart}.
 * Each difference must be in {@link #INTENDED}, with its reason; an unlisted one fails, and so does
 * a listed one that no example shows any more.
 */
class AkriValuesTest {

  static final Path AKRI_CHART = Path.of("src/test/resources/akri-chart");

  static final String SERVICE_PORT_NAME =
      "Akri's debugEcho and custom templates name the Service port after instanceService.name /"
          + " configurationService.name (akri-debug-echo-foo-instance-service: longer than the 15"
          + " characters a port name may have, so the API server refuses the Service); jakri uses"
          + " portName (default grpc), as Akri's udev and onvif templates do";

  /**
   * Akri template ({@code debugEcho}, {@code udev}, {@code opcua}, {@code onvif} or {@code custom})
   * and JSON-pointer-like path -> why it differs on purpose.
   */
  static final Map<String, String> INTENDED =
      Map.of(
          "debugEcho:/spec/instanceServiceSpec/ports/0/name", SERVICE_PORT_NAME,
          "debugEcho:/spec/configurationServiceSpec/ports/0/name", SERVICE_PORT_NAME,
          "custom:/spec/instanceServiceSpec/ports/0/name", SERVICE_PORT_NAME,
          "custom:/spec/configurationServiceSpec/ports/0/name", SERVICE_PORT_NAME);

  /**
   * Values of Akri's examples that jakri's values.schema.json refuses (dotted key -> why): jakri
   * renders each example without them, and {@link #akrisLintValuesAreRefusedOnlyForTheListedKeys}
   * shows that they, and nothing else, are refused.
   */
  static final Map<String, String> REFUSED =
      Map.of(
          "webhookConfiguration.caBundle",
          "Akri's lint value certificate.crt is not base64, which the API server refuses in a"
              + " caBundle",
          "agent.host.containerRuntimeSocket",
          "jakri reads device use from the kubelet's pod-resources socket, not the runtime's");

  /** Which of Akri's templates made a Configuration: its handler name, or custom. */
  static String template(Map<String, Object> configuration) {
    Object handler = get(configuration, "spec", "discoveryHandler", "name");
    return List.of("debugEcho", "udev", "opcua", "onvif").contains(handler)
        ? (String) handler
        : "custom";
  }

  /** One example: a title, values files (under src/test/resources/values) and --set pairs. */
  record Example(String title, List<String> files, List<String> sets) {
    @Override
    public String toString() {
      return title;
    }
  }

  static Stream<Arguments> examples() {
    return Stream.of(
            new Example(
                "Akri's test/helm-lint-values.yaml (every handler, broker Pods)",
                List.of("akri/helm-lint-values.yaml"),
                List.of()),
            new Example(
                "Akri's test/helm-lint-values-jobs.yaml (every handler, broker Jobs)",
                List.of("akri/helm-lint-values-jobs.yaml"),
                List.of()),
            new Example(
                "docs: debugEcho, unshared, nginx brokers",
                List.of(),
                List.of(
                    "debugEcho.configuration.enabled", "true",
                    "debugEcho.configuration.shared", "false",
                    "debugEcho.configuration.brokerPod.image.repository", "nginx",
                    "debugEcho.configuration.capacity", "5")),
            new Example(
                "docs: udev video cameras with the udev-video broker",
                List.of(),
                List.of(
                    "udev.configuration.enabled", "true",
                    "udev.configuration.name", "akri-udev-video",
                    "udev.configuration.discoveryDetails.udevRules[0]", "KERNEL==\"video[0-9]*\"",
                    "udev.configuration.brokerPod.image.repository",
                        "ghcr.io/project-akri/akri/udev-video-broker",
                    "udev.configuration.brokerPod.securityContext.privileged", "false")),
            new Example(
                "docs: ONVIF cameras, one IP included, video broker",
                List.of(),
                List.of(
                    "onvif.configuration.enabled", "true",
                    "onvif.configuration.brokerPod.image.repository",
                        "ghcr.io/project-akri/akri/onvif-video-broker",
                    "onvif.configuration.discoveryDetails.ipAddresses.action", "Include",
                    "onvif.configuration.discoveryDetails.ipAddresses.items[0]", "10.0.0.1",
                    "onvif.configuration.discoveryDetails.discoveryTimeoutSeconds", "2",
                    "onvif.configuration.discoveryProperties[0].name", "username",
                    "onvif.configuration.discoveryProperties[0].valueFrom.secretKeyRef.name",
                        "onvif-auth-secret",
                    "onvif.configuration.discoveryProperties[0].valueFrom.secretKeyRef.namespace",
                        "default",
                    "onvif.configuration.discoveryProperties[0].valueFrom.secretKeyRef.key",
                        "username",
                    "onvif.configuration.discoveryProperties[0].valueFrom.secretKeyRef.optional",
                        "false")),
            new Example(
                "docs: OPC UA monitoring with certificates and broker properties",
                List.of(),
                List.of(
                    "opcua.configuration.enabled", "true",
                    "opcua.configuration.name", "akri-opcua-monitoring",
                    "opcua.configuration.brokerPod.image.repository",
                        "ghcr.io/project-akri/akri/opcua-monitoring-broker",
                    "opcua.configuration.brokerProperties.IDENTIFIER", "Thermometer_Temperature",
                    "opcua.configuration.brokerProperties.NAMESPACE_INDEX", "2",
                    "opcua.configuration.discoveryDetails.discoveryUrls[0]",
                        "opc.tcp://192.168.1.10:4840/",
                    "opcua.configuration.discoveryDetails.discoveryUrls[1]",
                        "opc.tcp://192.168.1.11:4840/",
                    "opcua.configuration.discoveryDetails.applicationNames.action", "Include",
                    "opcua.configuration.discoveryDetails.applicationNames.items[0]", "Server",
                    "opcua.configuration.mountCertificates", "true")),
            new Example(
                "docs: a custom (HTTP) discovery handler",
                List.of(),
                List.of(
                    "custom.configuration.enabled", "true",
                    "custom.configuration.name", "akri-http",
                    "custom.configuration.discoveryHandlerName", "http",
                    "custom.configuration.discoveryDetails", "http://discovery:9999/discovery",
                    "custom.configuration.brokerPod.image.repository", "ghcr.io/example/broker",
                    "custom.configuration.brokerPod.env.MODE", "fast",
                    "custom.configuration.brokerPod.envFrom.secretRef[0]", "creds")))
        .map(Arguments::of);
  }

  static final Set<String> SEEN = java.util.concurrent.ConcurrentHashMap.newKeySet();

  @ParameterizedTest(name = "{0}")
  @MethodSource("examples")
  void akrisValuesGiveAkrisConfigurations(Example example) {
    Map<String, Map<String, Object>> akri = configurations(render(AKRI_CHART, example));
    Map<String, Map<String, Object>> jakri = configurations(render(RenderedChart.CHART, example));

    assertThat(jakri.keySet()).as("Configurations").isEqualTo(akri.keySet()).isNotEmpty();
    List<String> unlisted = new ArrayList<>();
    for (String name : akri.keySet()) {
      for (String path : differences("", akri.get(name), jakri.get(name))) {
        String key = template(akri.get(name)) + ":" + path;
        if (INTENDED.containsKey(key)) {
          SEEN.add(key);
        } else {
          unlisted.add(
              key + ": Akri " + at(akri.get(name), path) + ", jakri " + at(jakri.get(name), path));
        }
      }
    }
    assertThat(unlisted).as("unlisted differences from Akri's chart").isEmpty();
  }

  @Test
  void everyListedDifferenceIsShownByAnExample() {
    examples()
        .forEach(
            a -> {
              Example e = (Example) a.get()[0];
              Map<String, Map<String, Object>> akri = configurations(render(AKRI_CHART, e));
              Map<String, Map<String, Object>> jakri =
                  configurations(render(RenderedChart.CHART, e));
              akri.forEach(
                  (name, c) ->
                      differences("", c, jakri.getOrDefault(name, Map.of()))
                          .forEach(p -> SEEN.add(template(c) + ":" + p)));
            });
    assertThat(SEEN).containsAll(INTENDED.keySet());
  }

  @Test
  void akrisLintValuesAreRefusedOnlyForTheListedKeys() {
    String message =
        catchThrowable(
                () ->
                    new Helm(RenderedChart.CHART)
                        .template()
                        .withValuesFile(RenderedChart.VALUES.resolve("akri/helm-lint-values.yaml"))
                        .call())
            .getMessage();
    List<String> refused = new ArrayList<>();
    for (String line : message.split("\n")) {
      java.util.regex.Matcher at =
          java.util.regex.Pattern.compile("^- at '/([^']*)'").matcher(line);
      if (at.find()) {
        refused.add(at.group(1).replace('/', '.'));
      }
    }
    assertThat(refused).containsExactlyInAnyOrderElementsOf(REFUSED.keySet());
  }

  @Test
  void akriValuesAndHandlersValuesWorkSideBySide() {
    RenderedChart chart =
        RenderedChart.parse(
            new Helm(RenderedChart.CHART)
                .template()
                .withName(RenderedChart.RELEASE)
                .withNamespace(RenderedChart.NAMESPACE)
                .set("handlers.simulated.enabled", "true")
                .set("debugEcho.configuration.enabled", "true")
                .call());
    assertThat(chart.ofKind("Configuration"))
        .extracting(c -> get(c, "metadata", "name"))
        .containsExactlyInAnyOrder("simulated", "akri-debug-echo");
    Map<String, Object> debugEcho = chart.one("Configuration", "akri-debug-echo");
    assertThat(get(debugEcho, "metadata", "namespace")).isEqualTo(RenderedChart.NAMESPACE);
    assertThat(get(debugEcho, "spec", "discoveryHandler", "name")).isEqualTo("debugEcho");
    assertThat(get(debugEcho, "spec", "brokerSpec")).isNull();
    assertThat(get(debugEcho, "spec", "capacity")).isEqualTo(2);
    assertThat(
            (Object)
                new Yaml()
                    .load((String) get(debugEcho, "spec", "discoveryHandler", "discoveryDetails")))
        .isEqualTo(Map.of("descriptions", List.of("foo0", "foo1")));
  }

  @Test
  void akrisUdevValuesAlsoGiveTheAgentTheUdevMounts() {
    RenderedChart chart =
        RenderedChart.parse(
            new Helm(RenderedChart.CHART)
                .template()
                .withName(RenderedChart.RELEASE)
                .withNamespace(RenderedChart.NAMESPACE)
                .set("udev.configuration.enabled", "true")
                .set("udev.configuration.discoveryDetails.udevRules[0]", "KERNEL==\"video[0-9]*\"")
                .call());
    Object volumes =
        get(chart.one("DaemonSet", "jakri-agent"), "spec", "template", "spec", "volumes");
    assertThat(RenderedChart.maps(volumes))
        .extracting(v -> v.get("name"))
        .contains("udev-dev", "udev-sys", "udev-run");
  }

  @Test
  void requiredAkriValuesFailWithOneMessageNamingTheValue() {
    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .set("udev.configuration.enabled", "true")
                    .call())
        .hasMessageContaining("udev.configuration.discoveryDetails.udevRules");
    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .set("custom.configuration.enabled", "true")
                    .call())
        .hasMessageContaining("custom.configuration.discoveryHandlerName");
  }

  static String render(Path chart, Example example) {
    TemplateCommand template =
        new Helm(chart)
            .template()
            .withName(RenderedChart.RELEASE)
            .withNamespace(RenderedChart.NAMESPACE);
    for (String file : example.files()) {
      Path values = RenderedChart.VALUES.resolve(file);
      template =
          template.withValuesFile(
              chart.equals(RenderedChart.CHART) ? withoutRefused(values) : values);
    }
    for (int i = 0; i + 1 < example.sets().size(); i += 2) {
      template = template.set(example.sets().get(i), example.sets().get(i + 1));
    }
    return template.call();
  }

  /** A copy of a values file without the {@link #REFUSED} keys. */
  static Path withoutRefused(Path values) {
    try {
      Map<String, Object> tree = map(new Yaml().load(Files.readString(values)));
      for (String key : REFUSED.keySet()) {
        String[] steps = key.split("\\.");
        Object parent = tree;
        for (int i = 0; i < steps.length - 1 && parent instanceof Map; i++) {
          parent = ((Map<?, ?>) parent).get(steps[i]);
        }
        if (parent instanceof Map<?, ?> m) {
          m.remove(steps[steps.length - 1]);
        }
      }
      Path copy = Files.createTempFile("akri-values-", ".yaml");
      copy.toFile().deleteOnExit();
      Files.writeString(copy, new Yaml().dump(tree));
      return copy;
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  /** The rendered Configurations by name: their name and spec, discoveryDetails parsed. */
  static Map<String, Map<String, Object>> configurations(String yaml) {
    Map<String, Map<String, Object>> out = new TreeMap<>();
    for (Map<String, Object> c : RenderedChart.parse(yaml).ofKind("Configuration")) {
      String name = (String) get(c, "metadata", "name");
      Map<String, Object> spec = new LinkedHashMap<>(map(c.get("spec")));
      Map<String, Object> handler = new LinkedHashMap<>(map(spec.get("discoveryHandler")));
      Object details = handler.get("discoveryDetails");
      if (details instanceof String text) {
        Object parsed = new Yaml().load(text);
        handler.put(
            "discoveryDetails", parsed instanceof Map || parsed instanceof List ? parsed : text);
      }
      spec.put("discoveryHandler", handler);
      out.put(name, Map.of("name", name, "spec", spec));
    }
    return out;
  }

  /** Paths where two parsed YAML trees differ (maps by key, lists by index). */
  static List<String> differences(String at, Object a, Object b) {
    List<String> out = new ArrayList<>();
    if (Objects.equals(normal(a), normal(b))) {
      return out;
    }
    if (a instanceof Map<?, ?> ma && b instanceof Map<?, ?> mb) {
      Set<Object> keys = new LinkedHashSet<>(ma.keySet());
      keys.addAll(mb.keySet());
      for (Object k : keys) {
        out.addAll(differences(at + "/" + k, ma.get(k), mb.get(k)));
      }
    } else if (a instanceof List<?> la && b instanceof List<?> lb && la.size() == lb.size()) {
      for (int i = 0; i < la.size(); i++) {
        out.addAll(differences(at + "/" + i, la.get(i), lb.get(i)));
      }
    } else {
      out.add(at.isEmpty() ? "/" : at);
    }
    return out;
  }

  /** Numbers compare by value (YAML may give an Integer on one side and a Long on the other). */
  private static Object normal(Object o) {
    return o instanceof Number n ? new java.math.BigDecimal(n.toString()) : o;
  }

  private static Object at(Object root, String path) {
    Object node = root;
    for (String step : path.substring(1).split("/")) {
      if (node instanceof Map<?, ?> m) {
        node = m.get(step);
      } else if (node instanceof List<?> l) {
        node = l.get(Integer.parseInt(step));
      } else {
        return null;
      }
    }
    return node;
  }
}
