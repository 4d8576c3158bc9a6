package io.jakri.charts;

import static io.jakri.charts.RenderedChart.get;
import static io.jakri.charts.RenderedChart.maps;
import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The chart grants exactly the rules of the repo's reviewed RBAC files, and binds them. */
class RbacTest {

  private static RenderedChart repoFile(String path) throws IOException {
    return RenderedChart.parse(Files.readString(Path.of("..").resolve(path)));
  }

  private static List<Map<String, Object>> rules(Map<String, Object> role) {
    return maps(role.get("rules"));
  }

  @Test
  void agentRulesEqualAgentRbacYaml() throws IOException {
    RenderedChart repo = repoFile("agent/rbac/agent-rbac.yaml");
    RenderedChart chart = RenderedChart.render();

    assertThat(rules(chart.one("Role", "jakri-agent")))
        .isEqualTo(rules(repo.one("Role", "jakri-agent")));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-agent-node-tidy")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-agent-node-tidy")));
    assertBinds(chart.one("RoleBinding", "jakri-agent"), "Role", "jakri-agent", "jakri-agent");
    Map<String, Object> nodeEvents = chart.one("Role", "jakri-jakri-agent-node-events");
    assertThat(get(nodeEvents, "metadata", "namespace")).isEqualTo("default");
    assertThat(rules(nodeEvents)).isEqualTo(rules(repo.one("Role", "jakri-agent-node-events")));
    assertBinds(
        chart.one("RoleBinding", "jakri-jakri-agent-node-events"),
        "Role",
        "jakri-jakri-agent-node-events",
        "jakri-agent");
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-agent-node-tidy"),
        "ClusterRole",
        "jakri-jakri-agent-node-tidy",
        "jakri-agent");
  }

  @Test
  void controllerRulesEqualControllerRbacYaml() throws IOException {
    RenderedChart repo = repoFile("controller/rbac/controller-rbac.yaml");
    RenderedChart chart = RenderedChart.render();

    assertThat(rules(chart.one("Role", "jakri-controller")))
        .isEqualTo(rules(repo.one("Role", "jakri-controller")));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-controller-nodes")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-controller-nodes")));
    assertBinds(
        chart.one("RoleBinding", "jakri-controller"),
        "Role",
        "jakri-controller",
        "jakri-controller");
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-controller-nodes"),
        "ClusterRole",
        "jakri-jakri-controller-nodes",
        "jakri-controller");
  }

  @Test
  void chartGrantsNoRoleBeyondTheRepoFiles() {
    RenderedChart chart = RenderedChart.render();

    assertThat(chart.ofKind("Role"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactlyInAnyOrder(
            "jakri-agent", "jakri-jakri-agent-node-events", "jakri-controller");
    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactlyInAnyOrder("jakri-jakri-agent-node-tidy", "jakri-jakri-controller-nodes");
  }

  @Test
  void withoutNodeTidyingTheAgentGetsNoClusterRole() {
    RenderedChart chart = RenderedChart.render("no-tidy-node.yaml");

    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactly("jakri-jakri-controller-nodes");
    assertThat(chart.ofKind("ClusterRoleBinding")).hasSize(1);
    assertThat(
            RenderedChart.strings(
                get(
                    chart.one("DaemonSet", "jakri-agent"),
                    "spec",
                    "template",
                    "spec",
                    "containers",
                    0,
                    "args")))
        .contains("--no-tidy-node")
        .doesNotContain("--tidy-node");
  }

  private static void assertBinds(
      Map<String, Object> binding, String roleKind, String roleName, String serviceAccount) {
    assertThat(get(binding, "roleRef", "kind")).isEqualTo(roleKind);
    assertThat(get(binding, "roleRef", "name")).isEqualTo(roleName);
    assertThat(maps(binding.get("subjects")))
        .containsExactly(
            Map.of("kind", "ServiceAccount", "name", serviceAccount, "namespace", "jakri"));
  }
}
