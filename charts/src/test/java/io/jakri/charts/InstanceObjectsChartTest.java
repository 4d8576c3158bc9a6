package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** controller.instanceObjects.resources: the controller's flag and the RBAC generated for it. */
class InstanceObjectsChartTest {

  static final String ROLE = "jakri-jakri-controller-instance-objects";

  @Test
  void theListedKindsBecomeTheFlagAndOneRulePerApiGroup() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps",
            "controller.instanceObjects.resources[1]=deployments.apps",
            "controller.instanceObjects.resources[2]=services",
            "controller.instanceObjects.resources[3]=widgets.example.com",
            "controller.instanceObjects.resources[4]=statefulsets.apps");
    assertThat(strings(WebhookChartTest.controller(chart).get("args")))
        .contains(
            "--instance-object-resources=configmaps,deployments.apps,services,widgets.example.com,statefulsets.apps");
    List<String> verbs = List.of("get", "list", "watch", "create", "patch", "delete");
    assertThat(get(chart.one("ClusterRole", ROLE), "rules"))
        .isEqualTo(
            List.of(
                Map.of(
                    "apiGroups", List.of(""),
                    "resources", List.of("configmaps", "services"),
                    "verbs", verbs),
                Map.of(
                    "apiGroups",
                    List.of("apps"),
                    "resources",
                    List.of("deployments", "statefulsets"),
                    "verbs",
                    verbs),
                Map.of(
                    "apiGroups", List.of("example.com"),
                    "resources", List.of("widgets"),
                    "verbs", verbs)));
    Map<String, Object> binding = chart.one("ClusterRoleBinding", ROLE);
    assertThat(get(binding, "roleRef", "name")).isEqualTo(ROLE);
    assertThat(get(binding, "subjects", 0))
        .isEqualTo(
            Map.of("kind", "ServiceAccount", "name", "jakri-controller", "namespace", "jakri"));
  }

  @Test
  void byDefaultNoKindNoFlagAndNoRole() {
    RenderedChart chart = RenderedChart.render();
    assertThat(strings(WebhookChartTest.controller(chart).get("args")))
        .noneMatch(a -> a.startsWith("--instance-object-resources"));
    assertThat(chart.ofKind("ClusterRole")).noneMatch(r -> ROLE.equals(get(r, "metadata", "name")));
  }

  @Test
  void withoutRbacNoRoleIsRendered() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps", "rbac.enabled=false");
    assertThat(strings(WebhookChartTest.controller(chart).get("args")))
        .contains("--instance-object-resources=configmaps");
    assertThat(chart.ofKind("ClusterRole")).isEmpty();
  }

  @Test
  void aKindNotNamedAsRbacNamesItIsRefusedNamingTheKey() {
    assertThatThrownBy(
            () ->
                ValuesSchemaTest.template()
                    .set("controller.instanceObjects.resources[0]", "Deployments.apps")
                    .call())
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining("at '/controller/instanceObjects/resources/0'");
    assertThatThrownBy(
            () ->
                ValuesSchemaTest.template()
                    .set("controller.instanceObjects.resources[0]", "")
                    .call())
        .hasMessageContaining("values don't meet the specifications of the schema")
        .hasMessageContaining("at '/controller/instanceObjects/resources/0'");
    assertThatThrownBy(
            () ->
                ValuesSchemaTest.template()
                    .set("controller.instanceObjects.resources[0]", "configmaps")
                    .set("controller.instanceObjects.resources[1]", "configmaps")
                    .call())
        .hasMessageContaining("at '/controller/instanceObjects/resources'");
    assertThatThrownBy(
            () ->
                ValuesSchemaTest.template()
                    .set("controller.instanceObjects.resource[0]", "configmaps")
                    .call())
        .hasMessageContaining("additional properties 'resource' not allowed");
  }

  /**
   * With watchNamespaces the controller creates and watches namespaced kinds only in the watched
   * namespaces: resources get a Role there and no cluster-wide grant; clusterScopedResources (which
   * only a ClusterRole can grant) keep the ClusterRole, alone.
   */
  @Test
  void withWatchNamespacesNamespacedKindsAreGrantedOnlyInTheWatchedNamespaces() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps",
            "controller.instanceObjects.resources[1]=deployments.apps",
            "controller.instanceObjects.clusterScopedResources[0]=clusterwidgets.example.com",
            "watchNamespaces[0]=team-a",
            "watchNamespaces[1]=team-b");
    assertThat(strings(WebhookChartTest.controller(chart).get("args")))
        .contains(
            "--instance-object-resources=configmaps,deployments.apps,clusterwidgets.example.com");
    List<String> verbs = List.of("get", "list", "watch", "create", "patch", "delete");
    assertThat(get(chart.one("ClusterRole", ROLE), "rules"))
        .isEqualTo(
            List.of(
                Map.of(
                    "apiGroups", List.of("example.com"),
                    "resources", List.of("clusterwidgets"),
                    "verbs", verbs)));
    String local = "jakri-controller-instance-objects";
    List<Map<String, Object>> roles =
        chart.ofKind("Role").stream()
            .filter(r -> local.equals(get(r, "metadata", "name")))
            .toList();
    assertThat(roles)
        .extracting(r -> get(r, "metadata", "namespace"))
        .containsExactlyInAnyOrder("team-a", "team-b");
    for (Map<String, Object> role : roles) {
      assertThat(get(role, "rules"))
          .isEqualTo(
              List.of(
                  Map.of(
                      "apiGroups", List.of(""),
                      "resources", List.of("configmaps"),
                      "verbs", verbs),
                  Map.of(
                      "apiGroups", List.of("apps"),
                      "resources", List.of("deployments"),
                      "verbs", verbs)));
    }
    List<Map<String, Object>> bindings =
        chart.ofKind("RoleBinding").stream()
            .filter(r -> local.equals(get(r, "metadata", "name")))
            .toList();
    assertThat(bindings).hasSize(2);
    for (Map<String, Object> binding : bindings) {
      assertThat(get(binding, "roleRef"))
          .isEqualTo(
              Map.of("apiGroup", "rbac.authorization.k8s.io", "kind", "Role", "name", local));
      assertThat(get(binding, "subjects", 0))
          .isEqualTo(
              Map.of("kind", "ServiceAccount", "name", "jakri-controller", "namespace", "jakri"));
    }
  }

  @Test
  void withWatchNamespacesAndOnlyNamespacedKindsNothingIsClusterWide() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps", "watchNamespaces[0]=team-a");
    assertThat(chart.ofKind("ClusterRole")).noneMatch(r -> ROLE.equals(get(r, "metadata", "name")));
    assertThat(chart.ofKind("ClusterRoleBinding"))
        .noneMatch(r -> ROLE.equals(get(r, "metadata", "name")));
    assertThat(get(chart.one("Role", "jakri-controller-instance-objects"), "rules", 0, "resources"))
        .isEqualTo(List.of("configmaps"));
  }

  @Test
  void watchingEveryNamespaceBothListsShareTheClusterRole() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps",
            "controller.instanceObjects.clusterScopedResources[0]=clusterwidgets.example.com");
    assertThat((List<?>) get(chart.one("ClusterRole", ROLE), "rules"))
        .map(r -> ((Map<?, ?>) r).get("resources"))
        .isEqualTo(List.of(List.of("configmaps"), List.of("clusterwidgets")));
    assertThat(chart.ofKind("Role"))
        .noneMatch(r -> "jakri-controller-instance-objects".equals(get(r, "metadata", "name")));
  }
}
