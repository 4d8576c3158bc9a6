package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.map;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Akri's chart values beyond Configurations (agent, controller, prometheus, rbac, webhook, cleanup
 * hook, discovery handlers): each is honoured (the rendered field is checked) or refused by
 * values.schema.json, whose description names the jakri value to use.
 */
class AkriChartValuesTest {

  static final String AGENT = "jakri-agent";
  static final String CONTROLLER = "jakri-controller";

  static RenderedChart render(String... setValues) {
    return RenderedChart.render(RenderedChart.NAMESPACE, List.of(), List.of(setValues));
  }

  static Map<String, Object> podSpec(RenderedChart chart, String kind, String name) {
    return map(get(chart.one(kind, name), "spec", "template", "spec"));
  }

  static Map<String, Object> container(RenderedChart chart, String kind, String name) {
    return maps(podSpec(chart, kind, name).get("containers")).get(0);
  }

  @Test
  void akrisResourceValuesBecomeRequestsAndLimits() {
    RenderedChart chart = RenderedChart.render("akri-compat/agent-controller.yaml");

    assertThat(container(chart, "DaemonSet", AGENT).get("resources"))
        .isEqualTo(
            Map.of(
                "requests", Map.of("memory", "20Mi", "cpu", "15m"),
                "limits", Map.of("memory", "200Mi", "cpu", 1)));
    assertThat(container(chart, "Deployment", CONTROLLER).get("resources"))
        .isEqualTo(
            Map.of(
                "requests", Map.of("memory", "11Mi", "cpu", "10m"),
                "limits", Map.of("memory", "100Mi", "cpu", "26m")));
  }

  @Test
  void oneAkriResourceValueReplacesOnlyItsField() {
    RenderedChart chart =
        render("agent.resources.memoryLimit", "512Mi", "controller.resources.cpuRequest", "20m");

    assertThat(get(container(chart, "DaemonSet", AGENT), "resources"))
        .isEqualTo(
            Map.of(
                "requests", Map.of("memory", "192Mi", "cpu", "50m"),
                "limits", Map.of("memory", "512Mi", "cpu", "500m")));
    assertThat(get(container(chart, "Deployment", CONTROLLER), "resources", "requests", "cpu"))
        .isEqualTo("20m");
  }

  @Test
  void akrisNodeSelectorsJoinTheNodeSelector() {
    RenderedChart chart = RenderedChart.render("akri-compat/agent-controller.yaml");

    assertThat(podSpec(chart, "DaemonSet", AGENT).get("nodeSelector"))
        .isEqualTo(Map.of("kubernetes.io/os", "linux", "example.com/devices", "true"));
    assertThat(podSpec(chart, "Deployment", CONTROLLER).get("nodeSelector"))
        .isEqualTo(Map.of("kubernetes.io/os", "linux", "example.com/zone", "a"));
  }

  static final List<Map<String, Object>> CONTROL_PLANE_TOLERATIONS =
      List.of(
          Map.of(
              "key", "node-role.kubernetes.io/control-plane",
              "operator", "Exists",
              "effect", "NoSchedule"),
          Map.of(
              "key",
              "node-role.kubernetes.io/master",
              "operator",
              "Exists",
              "effect",
              "NoSchedule"));

  static final Object CONTROL_PLANE_AFFINITY =
      Map.of(
          "nodeAffinity",
          Map.of(
              "requiredDuringSchedulingIgnoredDuringExecution",
              Map.of(
                  "nodeSelectorTerms",
                  List.of(
                      Map.of(
                          "matchExpressions",
                          List.of(
                              Map.of(
                                  "key",
                                  "node-role.kubernetes.io/control-plane",
                                  "operator",
                                  "Exists"))),
                      Map.of(
                          "matchExpressions",
                          List.of(
                              Map.of(
                                  "key",
                                  "node-role.kubernetes.io/master",
                                  "operator",
                                  "Exists")))))));

  @Test
  void onlyOnControlPlaneRequiresAControlPlaneNodeAndToleratesItsTaint() {
    Map<String, Object> spec =
        podSpec(render("controller.onlyOnControlPlane", "true"), "Deployment", CONTROLLER);

    assertThat(spec.get("affinity")).isEqualTo(CONTROL_PLANE_AFFINITY);
    assertThat(spec.get("tolerations")).isEqualTo(CONTROL_PLANE_TOLERATIONS);
  }

  @Test
  void allowOnControlPlaneOnlyTolerates() {
    Map<String, Object> spec =
        podSpec(
            render(
                "controller.allowOnControlPlane",
                "true",
                "controller.tolerations[0].key",
                "example.com/dedicated",
                "controller.tolerations[0].operator",
                "Exists"),
            "Deployment",
            CONTROLLER);

    assertThat(spec).doesNotContainKey("affinity");
    List<Object> expected = new ArrayList<>();
    expected.add(Map.of("key", "example.com/dedicated", "operator", "Exists"));
    expected.addAll(CONTROL_PLANE_TOLERATIONS);
    assertThat(spec.get("tolerations")).isEqualTo(expected);
  }

  @Test
  void onlyOnControlPlaneWithoutTheTolerationAndDefaultsWithNeither() {
    Map<String, Object> only =
        podSpec(
            render(
                "controller.onlyOnControlPlane", "true", "controller.allowOnControlPlane", "false"),
            "Deployment",
            CONTROLLER);
    assertThat(only.get("affinity")).isEqualTo(CONTROL_PLANE_AFFINITY);
    assertThat(only).doesNotContainKey("tolerations");

    Map<String, Object> defaults = podSpec(render(), "Deployment", CONTROLLER);
    assertThat(defaults).doesNotContainKeys("affinity", "tolerations");
  }

  @Test
  void onlyOnControlPlaneKeepsOtherAffinityAndRefusesASecondRequiredNodeAffinity() {
    Map<String, Object> spec =
        podSpec(
            render(
                "controller.onlyOnControlPlane", "true",
                "controller.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].weight",
                    "1",
                "controller.affinity.podAntiAffinity.preferredDuringSchedulingIgnoredDuringExecution[0].podAffinityTerm.topologyKey",
                    "kubernetes.io/hostname"),
            "Deployment",
            CONTROLLER);
    assertThat(get(spec, "affinity", "podAntiAffinity")).isNotNull();
    assertThat(get(spec, "affinity", "nodeAffinity"))
        .isEqualTo(map(CONTROL_PLANE_AFFINITY).get("nodeAffinity"));

    assertThatThrownBy(
            () ->
                render(
                    "controller.onlyOnControlPlane", "true",
                    "controller.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].key",
                        "zone",
                    "controller.affinity.nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution.nodeSelectorTerms[0].matchExpressions[0].operator",
                        "Exists"))
        .hasMessageContaining("controller.onlyOnControlPlane");
  }

  @Test
  void akrisHostPathsBecomeTheAgentsPaths() {
    RenderedChart chart = RenderedChart.render("akri-compat/agent-controller.yaml");
    Map<String, Object> spec = podSpec(chart, "DaemonSet", AGENT);
    Map<String, String> hostPaths = new java.util.HashMap<>();
    for (Map<String, Object> v : maps(spec.get("volumes"))) {
      if (v.get("hostPath") != null) {
        hostPaths.put((String) v.get("name"), (String) get(v, "hostPath", "path"));
      }
    }
    assertThat(hostPaths)
        .containsEntry("device-plugins", "/opt/kubelet/device-plugins")
        .containsEntry("pod-resources", "/opt/kubelet/pod-resources")
        .containsEntry("discovery-handlers", "/opt/akri")
        .containsEntry("udev-run", "/opt/udev")
        .containsEntry("udev-dev", "/dev");
    assertThat(RenderedChart.strings(container(chart, "DaemonSet", AGENT).get("args")))
        .contains(
            "--device-plugin-dir=/opt/kubelet/device-plugins",
            "--pod-resources-socket=/opt/kubelet/pod-resources/kubelet.sock",
            "--discovery-handlers-dir=/opt/akri");
  }

  @Test
  void prometheusEnabledGivesPodMonitorsWithAkrisLabelAndPortOnBoth() {
    RenderedChart chart = RenderedChart.render("akri-compat/prometheus.yaml");

    assertThat(chart.ofKind("PodMonitor"))
        .hasSize(2)
        .allSatisfy(
            m -> assertThat(get(m, "metadata", "labels", "release")).isEqualTo("prometheus"));
    for (String[] workload : new String[][] {{"DaemonSet", AGENT}, {"Deployment", CONTROLLER}}) {
      Map<String, Object> c = container(chart, workload[0], workload[1]);
      assertThat(RenderedChart.strings(c.get("args"))).contains("--metrics-port=8080");
      assertThat(get(c, "ports", 0))
          .isEqualTo(Map.of("name", "metrics", "containerPort", 8080, "protocol", "TCP"));
    }
  }

  @Test
  void rbacDisabledRendersNoServiceAccountsOrRoles() {
    RenderedChart chart = RenderedChart.render("akri-compat/off.yaml");

    for (String kind :
        List.of("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding")) {
      assertThat(chart.ofKind(kind)).as(kind).isEmpty();
    }
    assertThat(podSpec(chart, "DaemonSet", AGENT)).doesNotContainKey("serviceAccountName");
    assertThat(podSpec(chart, "Deployment", CONTROLLER)).doesNotContainKey("serviceAccountName");

    RenderedChart named =
        render(
            "rbac.enabled", "false",
            "agent.serviceAccount.name", "my-agent",
            "controller.serviceAccount.name", "my-controller");
    assertThat(podSpec(named, "DaemonSet", AGENT).get("serviceAccountName")).isEqualTo("my-agent");
    assertThat(podSpec(named, "Deployment", CONTROLLER).get("serviceAccountName"))
        .isEqualTo("my-controller");
  }

  @Test
  void cleanupHookDisabledDropsTheUninstallHook(@TempDir Path workDir) throws IOException {
    RenderedChart chart =
        RenderedChart.renderWithHooks(
            workDir, RenderedChart.NAMESPACE, List.of("akri-compat/off.yaml"), List.of());

    assertThat(chart.ofKind("Job")).isEmpty();
    assertThat(
            RenderedChart.renderWithHooks(Files.createDirectory(workDir.resolve("d")))
                .ofKind("Job"))
        .hasSize(1);
  }

  @Test
  void agentAndControllerCanBeLeftOut() {
    RenderedChart noAgent = render("agent.enabled", "false", "podMonitor.enabled", "true");
    assertThat(noAgent.ofKind("DaemonSet")).isEmpty();
    assertThat(noAgent.ofKind("ServiceAccount"))
        .extracting(o -> get(o, "metadata", "name"))
        .containsExactly(CONTROLLER);
    assertThat(noAgent.ofKind("PodMonitor"))
        .extracting(o -> get(o, "metadata", "name"))
        .containsExactly(CONTROLLER);
    assertThat(noAgent.ofKind("Deployment")).hasSize(1);

    RenderedChart noController = render("controller.enabled", "false");
    assertThat(noController.ofKind("Deployment")).isEmpty();
    assertThat(noController.ofKind("ServiceAccount"))
        .extracting(o -> get(o, "metadata", "name"))
        .containsExactly(AGENT);
    assertThat(noController.objects())
        .noneMatch(o -> String.valueOf(get(o, "metadata", "name")).contains("controller"));
  }

  @Test
  void builtInHandlersDiscoveryValuesGiveTheAgentWhatThoseHandlersNeed() {
    RenderedChart chart = RenderedChart.render("akri-compat/discovery.yaml");
    Map<String, Object> spec = podSpec(chart, "DaemonSet", AGENT);

    assertThat(spec.get("hostNetwork")).isEqualTo(true); // onvif
    assertThat(maps(spec.get("volumes")))
        .extracting(v -> v.get("name"))
        .contains("udev-dev", "udev-sys", "udev-run"); // udev
    // debugEcho and opcua: built into the agent, nothing more to render.
    assertThat(
            render("debugEcho.discovery.enabled", "true", "opcua.discovery.enabled", "true")
                .objects())
        .isEqualTo(render().objects());
    assertThat(chart.ofKind("DaemonSet")).hasSize(1);
  }

  @Test
  void agentFullSharesTheHostNetwork() {
    assertThat(podSpec(render("agent.full", "true"), "DaemonSet", AGENT).get("hostNetwork"))
        .isEqualTo(true);
  }

  @Test
  void customDiscoveryIsADaemonSetRegisteringWithTheAgent() {
    RenderedChart chart = RenderedChart.render("akri-compat/custom-discovery.yaml");
    Map<String, Object> spec = podSpec(chart, "DaemonSet", "akri-http-discovery-daemonset");
    Map<String, Object> c = maps(spec.get("containers")).get(0);

    assertThat(c.get("image")).isEqualTo("ghcr.io/example/http-discovery:1.2");
    assertThat(c.get("name")).isEqualTo("akri-http-discovery");
    assertThat(maps(c.get("env")))
        .extracting(e -> e.get("name"))
        .containsExactly("POD_IP", "DISCOVERY_HANDLERS_DIRECTORY");
    assertThat(get(c, "env", 1, "value")).isEqualTo("/var/lib/akri");
    assertThat(get(c, "ports", 0, "containerPort")).isEqualTo(10001);
    assertThat(get(c, "volumeMounts", 0, "mountPath")).isEqualTo("/var/lib/akri");
    assertThat(get(spec, "volumes", 0, "hostPath", "path")).isEqualTo("/var/lib/akri");
    assertThat(spec.get("nodeSelector"))
        .isEqualTo(Map.of("kubernetes.io/os", "linux", "example.com/lan", "true"));
    assertThat(get(c, "resources", "limits")).isEqualTo(Map.of("memory", "24Mi", "cpu", "24m"));
    assertThat(get(chart.one("Configuration", "akri-http"), "spec", "discoveryHandler", "name"))
        .isEqualTo("http");

    assertThatThrownBy(() -> render("custom.discovery.enabled", "true"))
        .hasMessageContaining("custom.discovery.image.repository");
    assertThatThrownBy(
            () ->
                render(
                    "custom.discovery.enabled", "true",
                    "custom.discovery.image.repository", "x",
                    "agent.discoveryHandlers.enabled", "false"))
        .hasMessageContaining("needs agent.discoveryHandlers.enabled");
  }

  /**
   * Refused Akri values: Helm's error names the key; the schema's description names the jakri value
   * to use, and the chart README lists the key.
   */
  @ParameterizedTest(name = "{0}")
  @CsvSource({
    "useLatestContainers, true, /useLatestContainers, agent.image.tag",
    "webhookConfiguration.image.repository, x, /webhookConfiguration/image, controller.image",
    "webhookConfiguration.resources.memoryLimit, 1Gi, /webhookConfiguration/resources,"
        + " controller.resources",
    "webhookConfiguration.nodeSelectors.a, b, /webhookConfiguration/nodeSelectors,"
        + " controller.nodeSelectors",
    "webhookConfiguration.certImage.tag, v1, /webhookConfiguration/certImage,"
        + " webhookConfiguration.certManager",
    "useDevelopmentContainers, false, /useDevelopmentContainers, agent.image.tag",
    "crds.group, akri.sh, /crds, crds/",
    "agent.securityContext.runAsUser, 1000, /agent/securityContext, Security",
    "controller.securityContext.runAsUser, 1000, /controller/securityContext, Security",
    "agent.allowDebugEcho, true, /agent/allowDebugEcho, debugEcho",
    "agent.host.containerRuntimeSocket, /run/containerd/containerd.sock,"
        + " /agent/host/containerRuntimeSocket, agent.kubeletPodResourcesDir",
    "agent.host.containerRuntimeSock, /run/containerd/containerd.sock,"
        + " /agent/host/containerRuntimeSock, agent.kubeletPodResourcesDir",
    "udev.discovery.image.repository, x, /udev/discovery/image, agent.image",
    "onvif.discovery.resources.memoryLimit, 1Mi, /onvif/discovery/resources, agent.resources",
    "opcua.discovery.nodeSelectors.a, b, /opcua/discovery/nodeSelectors, agent.nodeSelector",
    "debugEcho.discovery.useNetworkConnection, true, /debugEcho/discovery/useNetworkConnection,"
        + " agent.discoveryHandlers.hostPath",
    "debugEcho.configuration.instanceService.name, foo,"
        + " /debugEcho/configuration/instanceService/name, portName",
    "prometheus.endpoint, /stats, /prometheus/endpoint, agent.metrics.path",
    "prometheus.portName, prom, /prometheus/portName, metrics",
  })
  void refusedAkriValuesNameTheKeyAndTheSchemaNamesTheJakriValue(
      String key, String value, String at, String jakri) throws IOException {
    assertThatThrownBy(() -> render(key, value)).hasMessageContaining("at '" + at + "'");

    Map<String, Object> schema = ValuesSchemaTest.schema();
    Object node = schema;
    for (String step : at.substring(1).split("/")) {
      node = ValuesSchemaTest.property(schema, node, step);
    }
    assertThat((String) map(node).get("description")).contains(jakri);
  }

  /** Every value the schema refuses outright is in the chart README, with what to use. */
  @Test
  void everyRefusedAkriValueIsInTheReadme() throws IOException {
    String readme = Files.readString(RenderedChart.CHART.resolve("README.md"));
    List<String> refused = new ArrayList<>();
    collectRefused("", ValuesSchemaTest.schema(), ValuesSchemaTest.schema(), refused);

    assertThat(refused).hasSizeGreaterThan(10);
    assertThat(refused)
        .allSatisfy(
            key ->
                assertThat(readme)
                    .as("chart README mentions %s", key)
                    .contains(
                        key.replaceAll(
                                "^(debugEcho|udev|opcua|onvif)\\.discovery\\.",
                                "<handler>.discovery.")
                            .replaceAll(
                                "^(debugEcho|udev|opcua|onvif|custom)\\.configuration\\.",
                                "<key>.configuration.")));
  }

  private static void collectRefused(
      String at, Object node, Map<String, Object> root, List<String> out) {
    Map<String, Object> n = ValuesSchemaTest.resolve(root, node);
    if (n.containsKey("not")) {
      out.add(at);
      return;
    }
    Object props = n.get("properties");
    if (props instanceof Map<?, ?> p) {
      p.forEach((k, v) -> collectRefused(at.isEmpty() ? (String) k : at + "." + k, v, root, out));
    }
  }
}
