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
        .containsExactly("--namespace=jakri", "--log-format=text");
    assertThat(get(pod, "securityContext", "runAsNonRoot")).isEqualTo(true);
    assertThat(get(pod, "securityContext", "runAsUser")).isEqualTo(65532);
    assertThat(RenderedChart.map(controller.get("securityContext")))
        .containsEntry("allowPrivilegeEscalation", false)
        .containsEntry("readOnlyRootFilesystem", true);
    assertThat(get(controller, "securityContext", "capabilities", "drop"))
        .isEqualTo(List.of("ALL"));
    assertThat(pod.get("serviceAccountName")).isEqualTo("jakri-controller");
  }
}
