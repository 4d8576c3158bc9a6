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

  /** A listed kind may be cluster-scoped, so watchNamespaces does not narrow this role. */
  @Test
  void withWatchNamespacesTheRoleStaysClusterWide() {
    RenderedChart chart =
        WebhookChartTest.render(
            "controller.instanceObjects.resources[0]=configmaps", "watchNamespaces[0]=team-a");
    assertThat(get(chart.one("ClusterRole", ROLE), "rules", 0, "resources"))
        .isEqualTo(List.of("configmaps"));
    assertThat(get(chart.one("ClusterRoleBinding", ROLE), "roleRef", "kind"))
        .isEqualTo("ClusterRole");
  }
}
