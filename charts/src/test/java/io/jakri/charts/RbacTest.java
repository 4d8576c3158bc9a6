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

    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-agent")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-agent")));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-agent-node-tidy")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-agent-node-tidy")));
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-agent"),
        "ClusterRole",
        "jakri-jakri-agent",
        "jakri-agent");
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-agent-node-tidy"),
        "ClusterRole",
        "jakri-jakri-agent-node-tidy",
        "jakri-agent");
  }

  @Test
  void draRulesEqualAgentRbacYamlAndComeOnlyWithDra() throws IOException {
    RenderedChart repo = repoFile("agent/rbac/agent-rbac.yaml");
    RenderedChart chart = RenderedChart.render("dra.yaml");

    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-agent-dra")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-agent-dra")));
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-agent-dra"),
        "ClusterRole",
        "jakri-jakri-agent-dra",
        "jakri-agent");
    assertThat(RenderedChart.render().ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .doesNotContain("jakri-jakri-agent-dra");
  }

  @Test
  void controllerRulesEqualControllerRbacYaml() throws IOException {
    RenderedChart repo = repoFile("controller/rbac/controller-rbac.yaml");
    RenderedChart chart = RenderedChart.render();

    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-controller")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-controller")));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-controller-nodes")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-controller-nodes")));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-controller-webhook")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-controller-webhook")));
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-controller-webhook"),
        "ClusterRole",
        "jakri-jakri-controller-webhook",
        "jakri-controller");
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-controller"),
        "ClusterRole",
        "jakri-jakri-controller",
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

    // Every namespace (the default): ClusterRoles, no namespaced Role.
    assertThat(chart.ofKind("Role")).isEmpty();
    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactlyInAnyOrder(
            "jakri-jakri-agent",
            "jakri-jakri-controller",
            "jakri-jakri-agent-node-tidy",
            "jakri-jakri-controller-nodes",
            "jakri-jakri-controller-webhook");
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
        .noneMatch(a -> a.startsWith("--namespace"));
  }

  @Test
  void watchNamespacesGrantsTheSameRulesAsARoleInEachListedNamespaceOnly() throws IOException {
    RenderedChart repo = repoFile("agent/rbac/agent-rbac.yaml");
    RenderedChart controllerRepo = repoFile("controller/rbac/controller-rbac.yaml");
    RenderedChart chart = RenderedChart.render("watch-namespaces.yaml");

    assertThat(chart.ofKind("Role"))
        .extracting(r -> get(r, "metadata", "name") + "@" + get(r, "metadata", "namespace"))
        .containsExactlyInAnyOrder(
            "jakri-agent@team-a",
            "jakri-agent@team-b",
            "jakri-controller@team-a",
            "jakri-controller@team-b",
            "jakri-jakri-agent-node-events@default");
    for (Map<String, Object> role : chart.ofKind("Role")) {
      String name = (String) get(role, "metadata", "name");
      if (name.equals("jakri-agent")) {
        assertThat(rules(role)).isEqualTo(rules(repo.one("ClusterRole", "jakri-agent")));
      } else if (name.equals("jakri-controller")) {
        assertThat(rules(role))
            .isEqualTo(rules(controllerRepo.one("ClusterRole", "jakri-controller")));
      }
    }
    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactlyInAnyOrder(
            "jakri-jakri-agent-node-tidy",
            "jakri-jakri-controller-nodes",
            "jakri-jakri-controller-webhook");
    for (String kind : new String[] {"DaemonSet", "Deployment"}) {
      Map<String, Object> workload = chart.ofKind(kind).get(0);
      assertThat(
              RenderedChart.strings(
                  get(workload, "spec", "template", "spec", "containers", 0, "args")))
          .contains("--namespaces=team-a,team-b");
    }
  }

  @Test
  void nodeLabelsAddTheRepoFilesNodeLabelsRuleOnlyWhenAskedFor() throws IOException {
    RenderedChart repo = repoFile("agent/rbac/agent-rbac.yaml");
    RenderedChart chart =
        RenderedChart.render(
            RenderedChart.NAMESPACE, List.of(), List.of("agent.labelNode", "true"));
    assertThat(rules(chart.one("ClusterRole", "jakri-jakri-agent-node-labels")))
        .isEqualTo(rules(repo.one("ClusterRole", "jakri-agent-node-labels")));
    assertBinds(
        chart.one("ClusterRoleBinding", "jakri-jakri-agent-node-labels"),
        "ClusterRole",
        "jakri-jakri-agent-node-labels",
        "jakri-agent");
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
        .contains("--label-node");
    assertThat(RenderedChart.render().ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .doesNotContain("jakri-jakri-agent-node-labels");
  }

  @Test
  void withoutNodeTidyingTheAgentGetsNoNodeClusterRole() {
    RenderedChart chart = RenderedChart.render("no-tidy-node.yaml");

    assertThat(chart.ofKind("ClusterRole"))
        .extracting(r -> get(r, "metadata", "name"))
        .containsExactlyInAnyOrder(
            "jakri-jakri-agent",
            "jakri-jakri-controller",
            "jakri-jakri-controller-nodes",
            "jakri-jakri-controller-webhook");
    assertThat(chart.ofKind("ClusterRoleBinding")).hasSize(4);
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
