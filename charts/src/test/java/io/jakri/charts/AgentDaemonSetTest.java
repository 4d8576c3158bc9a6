package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import com.marcnuri.helm.Helm;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;

class AgentDaemonSetTest {

  private static Map<String, Object> podSpec(RenderedChart chart) {
    return RenderedChart.map(
        get(chart.one("DaemonSet", "jakri-agent"), "spec", "template", "spec"));
  }

  private static Map<String, Object> agentContainer(RenderedChart chart) {
    return maps(podSpec(chart).get("containers")).get(0);
  }

  private static Map<String, String> mounts(Map<String, Object> container) {
    return maps(container.get("volumeMounts")).stream()
        .collect(Collectors.toMap(m -> (String) m.get("mountPath"), m -> (String) m.get("name")));
  }

  @Test
  void akrisDiscoveryEnabledFalseSwitchesThatHandlerOff() {
    RenderedChart chart =
        RenderedChart.render(
            RenderedChart.NAMESPACE,
            List.of(),
            List.of(
                "udev.discovery.enabled",
                "false",
                "opcua.discovery.enabled",
                "false",
                "onvif.discovery.enabled",
                "true"));
    assertThat(RenderedChart.strings(agentContainer(chart).get("args")))
        .contains("--disable-handlers=udev,opcua");
    assertThat(RenderedChart.strings(agentContainer(RenderedChart.render()).get("args")))
        .noneMatch(a -> a.startsWith("--disable-handlers"));
  }

  @Test
  void defaultsMountTheKubeletDirectoriesAndPassNodeNameFromTheDownwardApi() {
    RenderedChart chart = RenderedChart.render();
    Map<String, Object> pod = podSpec(chart);
    Map<String, Object> agent = agentContainer(chart);

    assertThat(agent.get("image")).isEqualTo("jakri/agent:0.1.0");
    assertThat(mounts(agent))
        .containsEntry("/var/lib/kubelet/device-plugins", "device-plugins")
        .containsEntry("/var/lib/kubelet/pod-resources", "pod-resources")
        .containsEntry("/tmp", "tmp")
        .containsEntry("/var/lib/akri", "discovery-handlers")
        .hasSize(4);
    Map<String, Object> volumes =
        maps(pod.get("volumes")).stream()
            .collect(Collectors.toMap(v -> (String) v.get("name"), v -> v));
    assertThat(get(volumes.get("device-plugins"), "hostPath", "path"))
        .isEqualTo("/var/lib/kubelet/device-plugins");
    assertThat(get(volumes.get("pod-resources"), "hostPath", "path"))
        .isEqualTo("/var/lib/kubelet/pod-resources");
    assertThat(get(volumes.get("tmp"), "emptyDir")).isNotNull();

    assertThat(maps(agent.get("env")))
        .contains(
            Map.of(
                "name",
                "NODE_NAME",
                "valueFrom",
                Map.of("fieldRef", Map.of("fieldPath", "spec.nodeName"))));
    assertThat(RenderedChart.strings(agent.get("args")))
        .contains(
            "--device-plugin-dir=/var/lib/kubelet/device-plugins",
            "--pod-resources-socket=/var/lib/kubelet/pod-resources/kubelet.sock",
            "--plugins-dir=/opt/jakri/plugins",
            "--tidy-node",
            "--metrics-port=9464");
    assertThat(get(agent, "livenessProbe", "httpGet", "path")).isEqualTo("/healthz");
    assertThat(get(agent, "readinessProbe", "httpGet", "path")).isEqualTo("/readyz");
    assertThat(get(agent, "readinessProbe", "httpGet", "port")).isEqualTo("metrics");
    assertThat(pod).doesNotContainKey("hostNetwork");
    assertThat(pod.get("serviceAccountName")).isEqualTo("jakri-agent");
  }

  @Test
  void theAgentGetsAnExplicitTerminationGraceWithMarginOverItsMeasuredShutdown() {
    // bench/README.md, "Shutdown": 4.4-5.8 s at 9,900 Instances with CDI specs; Kubernetes'
    // default grace (30 s) is not relied on.
    assertThat(podSpec(RenderedChart.render()).get("terminationGracePeriodSeconds")).isEqualTo(60);
    assertThat(
            podSpec(
                    RenderedChart.render(
                        RenderedChart.NAMESPACE,
                        List.of(),
                        List.of("agent.terminationGracePeriodSeconds", "120")))
                .get("terminationGracePeriodSeconds"))
        .isEqualTo(120);
  }

  @Test
  void debugEchoSharednessReachesTheAgentAsAkrisVariableDefaultShared() {
    assertThat(maps(agentContainer(RenderedChart.render()).get("env")))
        .contains(Map.of("name", "DEBUG_ECHO_INSTANCES_SHARED", "value", "true"));
    assertThat(maps(agentContainer(RenderedChart.render("debug-echo-unshared.yaml")).get("env")))
        .contains(Map.of("name", "DEBUG_ECHO_INSTANCES_SHARED", "value", "false"));
  }

  @Test
  void agentRunsAsRootWithoutPrivilegesCapabilitiesOrAWritableRootFilesystem() {
    RenderedChart chart = RenderedChart.render();
    Map<String, Object> pod = podSpec(chart);
    Map<String, Object> security = RenderedChart.map(agentContainer(chart).get("securityContext"));

    assertThat(get(pod, "securityContext", "runAsUser")).isEqualTo(0);
    assertThat(get(pod, "securityContext", "seccompProfile", "type")).isEqualTo("RuntimeDefault");
    assertThat(security)
        .containsEntry("allowPrivilegeEscalation", false)
        .containsEntry("readOnlyRootFilesystem", true)
        .containsEntry("privileged", false);
    assertThat(get(security, "capabilities", "drop")).isEqualTo(List.of("ALL"));
    assertThat(get(security, "capabilities", "add")).isNull();
  }

  @Test
  void resourcesMatchTheBenchMeasuredSizing() {
    Map<String, Object> agent = agentContainer(RenderedChart.render());

    assertThat(get(agent, "resources", "requests"))
        .isEqualTo(Map.of("cpu", "50m", "memory", "192Mi"));
    assertThat(get(agent, "resources", "limits"))
        .isEqualTo(Map.of("cpu", "500m", "memory", "384Mi"));
  }

  @Test
  void udevHandlerMountsDevSysAndRunUdevReadOnlyExceptDevAndAddsAkrisVideoConfiguration() {
    RenderedChart chart = RenderedChart.render("udev.yaml");
    Map<String, Object> agent = agentContainer(chart);

    assertThat(mounts(agent))
        .containsEntry("/dev", "udev-dev")
        .containsEntry("/sys", "udev-sys")
        .containsEntry("/run/udev", "udev-run")
        .containsEntry("/var/lib/akri", "discovery-handlers")
        .hasSize(7);
    assertThat(maps(agent.get("volumeMounts")))
        .filteredOn(m -> String.valueOf(m.get("name")).startsWith("udev-"))
        .extracting(m -> m.get("mountPath") + " " + m.getOrDefault("readOnly", false))
        .containsExactly("/dev false", "/sys true", "/run/udev true");
    assertThat(maps(podSpec(chart).get("volumes")))
        .filteredOn(v -> String.valueOf(v.get("name")).startsWith("udev-"))
        .extracting(v -> RenderedChart.map(v.get("hostPath")).get("path"))
        .containsExactly("/dev", "/sys", "/run/udev");
    Map<String, Object> spec =
        RenderedChart.map(chart.one("Configuration", "akri-udev-video").get("spec"));
    assertThat(get(spec, "discoveryHandler", "name")).isEqualTo("udev");
    assertThat(String.valueOf(get(spec, "discoveryHandler", "discoveryDetails")))
        .contains("KERNEL==\"video[0-9]*\"");
    // The switch alone mounts without a Configuration; off by default (see the defaults test).
    assertThat(mounts(agentContainer(RenderedChart.render("udev-mounts-only.yaml"))))
        .containsKeys("/dev", "/sys", "/run/udev");
  }

  @Test
  void draIsOffByDefaultAndWhenOnPassesItsFlagsAndMountsTheKubeletPluginDirectories() {
    Map<String, Object> off = agentContainer(RenderedChart.render());
    assertThat(RenderedChart.strings(off.get("args"))).noneMatch(a -> a.startsWith("--dra"));
    assertThat(mounts(off).values()).doesNotContain("dra-registry", "dra-plugin");

    RenderedChart chart = RenderedChart.render("dra.yaml");
    Map<String, Object> agent = agentContainer(chart);
    assertThat(RenderedChart.strings(agent.get("args")))
        .contains(
            "--dra",
            "--dra-registry-dir=/var/lib/kubelet/plugins_registry",
            "--dra-plugins-dir=/var/lib/kubelet/plugins");
    assertThat(mounts(agent))
        .containsEntry("/var/lib/kubelet/plugins_registry", "dra-registry")
        .containsEntry("/var/lib/kubelet/plugins/akri.sh", "dra-plugin");
    assertThat(maps(podSpec(chart).get("volumes")))
        .filteredOn(v -> String.valueOf(v.get("name")).startsWith("dra-"))
        .extracting(v -> RenderedChart.map(v.get("hostPath")).get("path"))
        .containsExactly("/var/lib/kubelet/plugins_registry", "/var/lib/kubelet/plugins/akri.sh");
  }

  @Test
  void hostNetworkSwitchesTheDnsPolicySoClusterNamesStillResolve() {
    Map<String, Object> pod = podSpec(RenderedChart.render("host-network.yaml"));

    assertThat(pod)
        .containsEntry("hostNetwork", true)
        .containsEntry("dnsPolicy", "ClusterFirstWithHostNet");
  }

  @Test
  void extraPluginsFromAnInitContainerAreMountedJarByJarNextToTheBundledOnes() {
    RenderedChart chart = RenderedChart.render("extra-plugins-init.yaml");
    Map<String, Object> pod = podSpec(chart);
    Map<String, Object> agent = agentContainer(chart);

    Map<String, Object> init = maps(pod.get("initContainers")).get(0);
    assertThat(init.get("image")).isEqualTo("registry.example.com/my-handlers:1.0");
    assertThat(maps(init.get("volumeMounts")))
        .containsExactly(Map.of("name", "extra-plugins", "mountPath", "/extra-plugins"));
    assertThat(maps(agent.get("volumeMounts")))
        .filteredOn(m -> "extra-plugins".equals(m.get("name")))
        .containsExactly(
            Map.of(
                "name", "extra-plugins",
                "mountPath", "/opt/jakri/plugins/my-handler.jar",
                "subPath", "my-handler.jar",
                "readOnly", true),
            Map.of(
                "name", "extra-plugins",
                "mountPath", "/opt/jakri/plugins/other-handler.jar",
                "subPath", "other-handler.jar",
                "readOnly", true));
    assertThat(maps(pod.get("volumes")))
        .filteredOn(v -> "extra-plugins".equals(v.get("name")))
        .singleElement()
        .satisfies(v -> assertThat(v).containsKey("emptyDir"));
    // The bundled plugins directory itself is not shadowed by a volume.
    assertThat(mounts(agent)).doesNotContainKey("/opt/jakri/plugins");
  }

  @Test
  void extraPluginsFromAVolumeNeedNoInitContainer() {
    Map<String, Object> pod = podSpec(RenderedChart.render("extra-plugins-volume.yaml"));

    assertThat(pod).doesNotContainKey("initContainers");
    assertThat(maps(pod.get("volumes")))
        .filteredOn(v -> "extra-plugins".equals(v.get("name")))
        .singleElement()
        .satisfies(
            v -> assertThat(get(v, "persistentVolumeClaim", "claimName")).isEqualTo("my-plugins"));
  }

  @Test
  void akrisDiscoveryHandlersDirectoryIsSharedWithTheHostUnlessTurnedOff() {
    RenderedChart chart = RenderedChart.render();
    Map<String, Object> volume =
        maps(podSpec(chart).get("volumes")).stream()
            .filter(v -> "discovery-handlers".equals(v.get("name")))
            .findFirst()
            .orElseThrow();
    assertThat(get(volume, "hostPath", "path")).isEqualTo("/var/lib/akri");
    assertThat(get(volume, "hostPath", "type")).isEqualTo("DirectoryOrCreate");
    assertThat(RenderedChart.strings(agentContainer(chart).get("args")))
        .contains("--discovery-handlers-dir=/var/lib/akri");

    RenderedChart off =
        RenderedChart.parse(
            new Helm(RenderedChart.CHART)
                .template()
                .withName("jakri")
                .withNamespace("jakri")
                .set("agent.discoveryHandlers.enabled", "false")
                .call());
    assertThat(RenderedChart.strings(agentContainer(off).get("args")))
        .contains("--discovery-handlers-dir=none");
    assertThat(mounts(agentContainer(off))).doesNotContainKey("/var/lib/akri");
  }

  @Test
  void cdiIsOffByDefaultAndOnWritesIntoTheHostsCdiDirectory() {
    RenderedChart off = RenderedChart.render();
    assertThat(RenderedChart.strings(agentContainer(off).get("args")))
        .noneMatch(a -> a.startsWith("--cdi"));
    assertThat(mounts(agentContainer(off))).doesNotContainKey("/var/run/cdi");

    RenderedChart on =
        RenderedChart.parse(
            new Helm(RenderedChart.CHART)
                .template()
                .withName("jakri")
                .withNamespace("jakri")
                .set("agent.cdi.enabled", "true")
                .call());
    assertThat(RenderedChart.strings(agentContainer(on).get("args")))
        .contains("--cdi", "--cdi-dir=/var/run/cdi");
    assertThat(mounts(agentContainer(on))).containsEntry("/var/run/cdi", "cdi");
    Map<String, Object> volume =
        maps(podSpec(on).get("volumes")).stream()
            .filter(v -> "cdi".equals(v.get("name")))
            .findFirst()
            .orElseThrow();
    assertThat(get(volume, "hostPath", "path")).isEqualTo("/var/run/cdi");
    assertThat(get(volume, "hostPath", "type")).isEqualTo("DirectoryOrCreate");
  }

  @Test
  void extraPluginJarsWithoutASourceAreRefused() {
    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .withName("jakri")
                    .set("agent.extraPlugins.jars[0]", "x.jar")
                    .call())
        .hasMessageContaining(
            "needs agent.extraPlugins.volume or agent.extraPlugins.initContainer");
  }

  @Test
  void safeguardsBecomeTheAgentsFlags() {
    assertThat(RenderedChart.strings(agentContainer(RenderedChart.render()).get("args")))
        .contains("--class-domains=example.com")
        .doesNotContain("--allow-reserved-broker-env")
        .noneMatch(a -> a.toString().startsWith("--allow-host-mount-prefix"))
        .noneMatch(a -> a.toString().startsWith("--metrics-bind-address"))
        .noneMatch(a -> a.toString().startsWith("--max-slots"))
        .noneMatch(a -> a.toString().startsWith("--handler-"));

    assertThat(
            RenderedChart.strings(
                agentContainer(RenderedChart.render("safeguards.yaml")).get("args")))
        .contains(
            "--class-domains=example.com,nvidia.com",
            "--allow-reserved-broker-env",
            "--allow-host-mount-prefix=/var/lib/kubelet/plugins/gpu",
            "--allow-host-mount-prefix=/etc/akri-certs",
            "--metrics-bind-address=10.0.0.7",
            "--max-slots-per-configuration=5000",
            "--max-slots-per-agent=20000",
            "--handler-call-timeout=30s",
            "--handler-stranded-threads=2");
  }

  @Test
  void metricsPortAndPodMonitorAppearOnlyWhenEnabled() {
    assertThat(RenderedChart.render().ofKind("PodMonitor")).isEmpty();
    Map<String, Object> withoutMetrics = agentContainer(RenderedChart.render("no-metrics.yaml"));
    assertThat(RenderedChart.strings(withoutMetrics.get("args")))
        .noneMatch(a -> a.toString().startsWith("--metrics-port"));
    assertThat(withoutMetrics).doesNotContainKeys("ports", "livenessProbe", "readinessProbe");

    RenderedChart chart = RenderedChart.render("pod-monitor.yaml");
    Map<String, Object> agent = agentContainer(chart);
    assertThat(RenderedChart.strings(agent.get("args"))).contains("--metrics-port=9464");
    assertThat(maps(agent.get("ports")))
        .containsExactly(Map.of("name", "metrics", "containerPort", 9464, "protocol", "TCP"));
    Map<String, Object> monitor = chart.one("PodMonitor", "jakri-agent");
    assertThat(get(monitor, "metadata", "labels", "release")).isEqualTo("prometheus");
    assertThat(get(monitor, "spec", "selector", "matchLabels"))
        .isEqualTo(get(chart.one("DaemonSet", "jakri-agent"), "spec", "selector", "matchLabels"));
    assertThat(get(monitor, "spec", "podMetricsEndpoints", 0, "port")).isEqualTo("metrics");
  }

  @Test
  void podMonitorWithoutMetricsIsRefused() {
    assertThatThrownBy(
            () ->
                new Helm(RenderedChart.CHART)
                    .template()
                    .withName("jakri")
                    .set("podMonitor.enabled", "true")
                    .set("agent.metrics.enabled", "false")
                    .call())
        .hasMessageContaining("podMonitor.enabled needs agent.metrics.enabled");
  }
}
