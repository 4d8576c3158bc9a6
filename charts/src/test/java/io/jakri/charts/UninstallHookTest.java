package io.jakri.charts;

import static io.jakri.charts.RenderedChart.HOOK;
import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UninstallHookTest {

  @TempDir Path workDir;

  private static String annotation(Map<String, Object> object, String key) {
    return (String) get(object, "metadata", "annotations", key);
  }

  @Test
  void hookObjectsAreNotPartOfTheReleaseManifest() {
    RenderedChart chart = RenderedChart.render();

    assertThat(chart.ofKind("Job")).isEmpty();
    assertThat(chart.objects())
        .noneMatch(o -> "jakri-uninstall".equals(get(o, "metadata", "name")));
  }

  @Test
  void preDeleteJobDeletesConfigurationsAndWaitsForInstancesWithItsOwnMinimalRole()
      throws IOException {
    RenderedChart chart = RenderedChart.renderWithHooks(workDir);
    Map<String, Object> job = chart.one("Job", "jakri-uninstall");

    for (String kind : List.of("Job", "ServiceAccount", "Role", "RoleBinding")) {
      Map<String, Object> object = chart.one(kind, "jakri-uninstall");
      assertThat(annotation(object, HOOK)).as(kind).isEqualTo("pre-delete");
      assertThat(annotation(object, HOOK + "-delete-policy"))
          .as(kind)
          .isEqualTo("before-hook-creation,hook-succeeded");
    }
    // The hook's RBAC exists before its Job runs.
    assertThat(Integer.parseInt(annotation(chart.one("Role", "jakri-uninstall"), HOOK + "-weight")))
        .isLessThan(Integer.parseInt(annotation(job, HOOK + "-weight")));

    Map<String, Object> pod = RenderedChart.map(get(job, "spec", "template", "spec"));
    assertThat(pod.get("serviceAccountName")).isEqualTo("jakri-uninstall");
    assertThat(pod.get("restartPolicy")).isEqualTo("Never");
    Map<String, Object> container = maps(pod.get("containers")).get(0);
    assertThat(container.get("image")).isEqualTo("docker.io/bitnami/kubectl:latest");
    assertThat(String.join("\n", RenderedChart.strings(container.get("args"))))
        .contains("kubectl delete configurations.akri.sh --all --namespace \"$NAMESPACE\"")
        .contains("kubectl get instances.akri.sh --namespace \"$NAMESPACE\"");
    assertThat(maps(container.get("env")))
        .contains(Map.of("name", "NAMESPACE", "value", "jakri"))
        .contains(Map.of("name", "TIMEOUT_SECONDS", "value", "120"));
    assertThat(get(container, "securityContext", "readOnlyRootFilesystem")).isEqualTo(true);

    assertThat(maps(chart.one("Role", "jakri-uninstall").get("rules")))
        .containsExactly(
            Map.of(
                "apiGroups", List.of("akri.sh"),
                "resources", List.of("configurations"),
                "verbs", List.of("get", "list", "watch", "delete")),
            Map.of(
                "apiGroups", List.of("akri.sh"),
                "resources", List.of("instances"),
                "verbs", List.of("get", "list", "watch")));
    assertThat(maps(chart.one("RoleBinding", "jakri-uninstall").get("subjects")))
        .containsExactly(
            Map.of("kind", "ServiceAccount", "name", "jakri-uninstall", "namespace", "jakri"));
  }

  @Test
  void hookCanBeTurnedOff() throws IOException {
    RenderedChart chart = RenderedChart.renderWithHooks(workDir, "uninstallHook.enabled", "false");

    assertThat(chart.ofKind("Job")).isEmpty();
    assertThat(chart.objects())
        .noneMatch(o -> "jakri-uninstall".equals(get(o, "metadata", "name")));
  }
}
