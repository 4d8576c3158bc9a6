package io.jakri.charts;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.NamespaceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FieldValidateable.Validation;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import java.util.stream.Stream;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.yaml.snakeyaml.Yaml;

/**
 * Every object the chart renders, for every value set the chart tests render, is accepted by a real
 * kube-apiserver 1.26.4 in a server-side dry run (strict field validation, so an unknown or
 * duplicate field is a refusal too). Hooks included: every set is rendered with {@link
 * RenderedChart#renderWithHooks}. The chart's CRDs are created for real first, so Configurations
 * are validated against their schema and CEL rules; the namespaces the objects name are created for
 * real. Nothing else is persisted.
 */
@ExtendWith(RealKube.class)
class RenderedChartOnRealApiServerIT {

  /** API groups the test server does not serve: objects of these are skipped, with the reason. */
  static final Map<String, String> NOT_SERVED =
      Map.of(
          "resource.k8s.io",
          "DRA (resource.k8s.io/v1 ResourceSlice, DeviceClass) does not exist in Kubernetes 1.26",
          "monitoring.coreos.com",
          "the Prometheus Operator's PodMonitor CRD is not installed on the test server (not part"
              + " of this repository); AgentDaemonSetTest and ControllerDeploymentTest check it");

  /** Values files Helm refuses to render (nothing to send), and the test that shows it. */
  static final Map<String, String> REFUSED_BY_HELM =
      Map.of("bad-log-format.yaml", "logFormat must be text or json (LogFormatTest)");

  /** One set of values: files under src/test/resources/values and --set pairs. */
  record ValueSet(String title, List<String> files, List<String> sets) {
    @Override
    public String toString() {
      return title;
    }
  }

  static Stream<ValueSet> valueSets() throws IOException {
    List<ValueSet> out = new ArrayList<>();
    out.add(new ValueSet("defaults", List.of(), List.of()));
    // Every values file, alone (new files are picked up without editing this test).
    try (Stream<Path> files = Files.walk(RenderedChart.VALUES)) {
      for (Path file : files.filter(p -> p.toString().endsWith(".yaml")).sorted().toList()) {
        String name = RenderedChart.VALUES.relativize(file).toString();
        if (!REFUSED_BY_HELM.containsKey(name)) {
          out.add(new ValueSet(name, List.of(accepted(name)), List.of()));
        }
      }
    }
    // Combinations and the inline --set values of the chart tests.
    out.add(
        new ValueSet(
            "watchNamespaces + DRA + tidyNode off",
            List.of("watch-namespaces.yaml", "dra.yaml", "no-tidy-node.yaml"),
            List.of()));
    out.add(
        new ValueSet(
            "watchNamespaces including default (no node-events Role)",
            List.of(),
            List.of("watchNamespaces[0]", "default", "watchNamespaces[1]", "team-a")));
    out.add(
        new ValueSet(
            "agent.discoveryHandlers.enabled=false",
            List.of(),
            List.of("agent.discoveryHandlers.enabled", "false")));
    out.add(
        new ValueSet("agent.cdi.enabled=true", List.of(), List.of("agent.cdi.enabled", "true")));
    out.add(
        new ValueSet(
            "controller metrics off, podMonitor on",
            List.of(),
            List.of("controller.metrics.enabled", "false", "podMonitor.enabled", "true")));
    out.add(
        new ValueSet(
            "handlers.simulated without broker",
            List.of(),
            List.of("handlers.simulated.enabled", "true")));
    out.add(
        new ValueSet(
            "handlers.simulated + Akri's debugEcho",
            List.of(),
            List.of(
                "handlers.simulated.enabled", "true", "debugEcho.configuration.enabled", "true")));
    out.add(
        new ValueSet(
            "Akri's udev values",
            List.of(),
            List.of(
                "udev.configuration.enabled",
                "true",
                "udev.configuration.discoveryDetails.udevRules[0]",
                "KERNEL==\"video[0-9]*\"")));
    out.add(
        new ValueSet(
            "uninstallHook.enabled=false", List.of(), List.of("uninstallHook.enabled", "false")));
    AkriValuesTest.examples()
        .map(a -> (AkriValuesTest.Example) a.get()[0])
        .forEach(
            e ->
                out.add(
                    new ValueSet(
                        "AkriValuesTest: " + e.title(),
                        e.files().stream().map(RenderedChartOnRealApiServerIT::accepted).toList(),
                        e.sets())));
    return out.stream();
  }

  /**
   * A values file as the chart accepts it: Akri's own files ({@code akri/}) without the keys the
   * schema refuses ({@link AkriValuesTest#REFUSED}; an absolute path, which {@code
   * RenderedChart.VALUES.resolve} keeps).
   */
  static String accepted(String name) {
    return name.startsWith("akri/")
        ? AkriValuesTest.withoutRefused(RenderedChart.VALUES.resolve(name))
            .toAbsolutePath()
            .toString()
        : name;
  }

  @BeforeAll
  static void createTheChartsCrds(RealApiServer api) throws IOException {
    ChartOnServer.ensureCrds(api);
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("valueSets")
  void everyRenderedObjectPassesAServerSideDryRun(
      ValueSet set, RealApiServer api, @TempDir Path workDir) throws IOException {
    RenderedChart chart =
        RenderedChart.renderWithHooks(workDir, RenderedChart.NAMESPACE, set.files(), set.sets());
    KubernetesClient admin = api.admin();
    ensureNamespaces(admin, chart);

    List<String> refused = new ArrayList<>();
    List<String> skipped = new ArrayList<>();
    int sent = 0;
    for (Map<String, Object> object : chart.objects()) {
      String group = ChartOnServer.group(object.get("apiVersion"));
      if (NOT_SERVED.containsKey(group)) {
        skipped.add(ChartOnServer.describe(object) + ": " + NOT_SERVED.get(group));
        continue;
      }
      try {
        admin
            .resource(ChartOnServer.generic(admin, object))
            .dryRun()
            .fieldValidation(Validation.STRICT)
            .create();
        sent++;
      } catch (KubernetesClientException e) {
        refused.add(
            ChartOnServer.describe(object)
                + " (values: "
                + set
                + "): HTTP "
                + e.getCode()
                + " "
                + (e.getStatus() != null ? e.getStatus().getMessage() : e.getMessage()));
      }
    }
    skipped.forEach(s -> System.out.println("[" + set + "] skipped " + s));
    assertThat(refused).as("objects the API server refused").isEmpty();
    assertThat(sent).as("objects sent").isPositive();
  }

  /**
   * The control: the same dry run refuses what a chart must not render, so a pass above means the
   * server checked. An unknown field (strict field validation) and a Configuration breaking its
   * CRD's CEL rule (a brokerSpec with both a Pod and a Job spec).
   */
  @Test
  void theDryRunRefusesAnUnknownFieldAndAConfigurationBreakingItsCrd(RealApiServer api) {
    KubernetesClient admin = api.admin();
    RenderedChart chart = RenderedChart.render("all-handlers-with-brokers.yaml");
    ensureNamespaces(admin, chart);

    Map<String, Object> daemonSet = copy(chart.one("DaemonSet", "jakri-agent"));
    RenderedChart.map(RenderedChart.get(daemonSet, "spec")).put("replicaz", 1);
    assertThat(dryRunRefusal(admin, daemonSet)).contains("unknown field").contains("replicaz");

    Map<String, Object> configuration =
        copy(
            chart.ofKind("Configuration").stream()
                .filter(c -> RenderedChart.get(c, "spec", "brokerSpec", "brokerPodSpec") != null)
                .findFirst()
                .orElseThrow());
    RenderedChart.map(RenderedChart.get(configuration, "spec", "brokerSpec"))
        .put("brokerJobSpec", Map.of("template", Map.of("spec", Map.of())));
    assertThat(dryRunRefusal(admin, configuration))
        .contains("exactly one of brokerPodSpec and brokerJobSpec");
  }

  private static String dryRunRefusal(KubernetesClient admin, Map<String, Object> object) {
    try {
      admin
          .resource(ChartOnServer.generic(admin, object))
          .dryRun()
          .fieldValidation(Validation.STRICT)
          .create();
    } catch (KubernetesClientException e) {
      return e.getCode() + " " + e.getMessage();
    }
    throw new AssertionError(ChartOnServer.describe(object) + " was accepted");
  }

  /** A deep, mutable copy of a rendered object (YAML round trip). */
  private static Map<String, Object> copy(Map<String, Object> object) {
    Yaml yaml = new Yaml();
    return RenderedChart.map(yaml.load(yaml.dump(object)));
  }

  /**
   * Not a dry run: Akri's documented debugEcho install (its --set values, unchanged) rendered by
   * jakri's chart and created on the real API server as Helm would create it, in a namespace and
   * under a name of its own; every object is stored, the Configuration as rendered (through the
   * chart's admission webhook, which nothing answers here: failurePolicy Ignore admits it). Then
   * removed again, cluster-scoped objects included.
   */
  @Test
  void akrisDocumentedDebugEchoInstallIsCreatedForReal(RealApiServer api, @TempDir Path workDir)
      throws IOException {
    AkriValuesTest.Example docs =
        AkriValuesTest.examples()
            .map(a -> (AkriValuesTest.Example) a.get()[0])
            .filter(e -> e.title().startsWith("docs: debugEcho"))
            .findFirst()
            .orElseThrow();
    String namespace = api.namespace("akri-docs");
    List<String> sets = new ArrayList<>(docs.sets());
    sets.addAll(List.of("fullnameOverride", namespace));
    RenderedChart chart = RenderedChart.renderWithHooks(workDir, namespace, docs.files(), sets);
    KubernetesClient admin = api.admin();
    List<io.fabric8.kubernetes.api.model.GenericKubernetesResource> created = new ArrayList<>();
    try {
      for (Map<String, Object> object : chart.objects()) {
        if (NOT_SERVED.containsKey(ChartOnServer.group(object.get("apiVersion")))) {
          continue;
        }
        created.add(
            admin
                .resource(ChartOnServer.generic(admin, object))
                .fieldValidation(Validation.STRICT)
                .create());
      }
      System.out.println(
          "Akri's documented debugEcho install, created on the real API server: "
              + created.stream()
                  .map(o -> o.getKind() + " " + o.getMetadata().getName())
                  .sorted()
                  .toList());
      assertThat(created)
          .extracting(o -> o.getKind())
          .contains(
              "DaemonSet",
              "Deployment",
              "Configuration",
              "ValidatingWebhookConfiguration",
              "ClusterRole");
      Map<String, Object> rendered = chart.ofKind("Configuration").get(0);
      io.fabric8.kubernetes.api.model.GenericKubernetesResource stored =
          admin
              .genericKubernetesResources("akri.sh/v0", "Configuration")
              .inNamespace(namespace)
              .withName((String) RenderedChart.get(rendered, "metadata", "name"))
              .get();
      assertThat(stored.getAdditionalProperties().get("spec"))
          .isEqualTo(RenderedChart.get(rendered, "spec"));
    } finally {
      for (int i = created.size() - 1; i >= 0; i--) {
        admin.resource(created.get(i)).delete();
      }
    }
  }

  @Test
  void valuesHelmRefusesAreRefusedBeforeAnythingIsSent() {
    REFUSED_BY_HELM.forEach(
        (file, why) ->
            assertThatThrownBy(() -> RenderedChart.render(file)).as(file + ": " + why).isNotNull());
  }

  /** Creates (for real) the release namespace and every namespace a rendered object names. */
  private static void ensureNamespaces(KubernetesClient admin, RenderedChart chart) {
    TreeSet<String> namespaces = new TreeSet<>(List.of(RenderedChart.NAMESPACE));
    for (Map<String, Object> object : chart.objects()) {
      Object namespace = RenderedChart.get(object, "metadata", "namespace");
      if (namespace != null) {
        namespaces.add(namespace.toString());
      }
    }
    for (String namespace : namespaces) {
      if (admin.namespaces().withName(namespace).get() == null) {
        admin
            .namespaces()
            .resource(
                new NamespaceBuilder().withNewMetadata().withName(namespace).endMetadata().build())
            .create();
      }
    }
  }
}
