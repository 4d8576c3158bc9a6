package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerDeploymentTest {

  @Test
  void controllerRunsOnceAsNonRootWithAReadOnlyRootFilesystem() {
    Map<String, Object> deployment = RenderedChart.render().one("Deployment", "jakri-controller");
    Map<String, Object> pod = RenderedChart.map(get(deployment, "spec", "template", "spec"));
    Map<String, Object> controller = maps(pod.get("containers")).get(0);

    assertThat(get(deployment, "spec", "replicas")).isEqualTo(1);
    assertThat(controller.get("image")).isEqualTo("jakri/controller:0.1.0");
    assertThat(RenderedChart.strings(controller.get("args")))
        .containsExactly(
            "--log-format=text",
            "--metrics-port=9464",
            "--webhook-port=8443",
            "--webhook-names=jakri-webhook.jakri.svc,jakri-webhook.jakri.svc.cluster.local",
            "--webhook-configuration=jakri-webhook");
    assertThat(maps(controller.get("ports")))
        .containsExactly(
            Map.of("name", "metrics", "containerPort", 9464, "protocol", "TCP"),
            Map.of("name", "webhook", "containerPort", 8443, "protocol", "TCP"));
    assertThat(get(pod, "securityContext", "runAsNonRoot")).isEqualTo(true);
    assertThat(get(pod, "securityContext", "runAsUser")).isEqualTo(65532);
    assertThat(RenderedChart.map(controller.get("securityContext")))
        .containsEntry("allowPrivilegeEscalation", false)
        .containsEntry("readOnlyRootFilesystem", true);
    assertThat(get(controller, "securityContext", "capabilities", "drop"))
        .isEqualTo(List.of("ALL"));
    assertThat(pod.get("serviceAccountName")).isEqualTo("jakri-controller");
  }

  @Test
  void controllerMetricsHaveAPodMonitorAndCanBeTurnedOff() {
    RenderedChart chart = RenderedChart.render("pod-monitor.yaml");
    Map<String, Object> monitor = chart.one("PodMonitor", "jakri-controller");
    assertThat(get(monitor, "metadata", "labels", "release")).isEqualTo("prometheus");
    assertThat(get(monitor, "spec", "selector", "matchLabels"))
        .isEqualTo(
            get(chart.one("Deployment", "jakri-controller"), "spec", "selector", "matchLabels"));
    assertThat(get(monitor, "spec", "podMetricsEndpoints", 0, "port")).isEqualTo("metrics");

    RenderedChart off =
        RenderedChart.parse(
            new com.marcnuri.helm.Helm(RenderedChart.CHART)
                .template()
                .withName(RenderedChart.RELEASE)
                .withNamespace(RenderedChart.NAMESPACE)
                .set("controller.metrics.enabled", "false")
                .set("webhookConfiguration.enabled", "false")
                .set("podMonitor.enabled", "true")
                .call());
    Map<String, Object> container =
        maps(get(
                off.one("Deployment", "jakri-controller"),
                "spec",
                "template",
                "spec",
                "containers"))
            .get(0);
    assertThat(RenderedChart.strings(container.get("args")))
        .noneMatch(a -> a.startsWith("--metrics-port"));
    assertThat(container).doesNotContainKey("ports");
    assertThat(off.ofKind("PodMonitor"))
        .extracting(m -> get(m, "metadata", "name"))
        .containsExactly("jakri-agent");
  }
}
