package io.jakri.charts;

import static io.jakri.charts.RenderedChart.maps;
import static io.jakri.charts.RenderedChart.strings;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.SoftAssertions.assertSoftly;

import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReview;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * The chart's RBAC, applied for real to a kube-apiserver 1.26.4 with RBAC on, lets the agent and
 * the controller do exactly what the project's canonical manifests ({@code
 * agent/rbac/agent-rbac.yaml}, {@code controller/rbac/controller-rbac.yaml}) grant, and nothing
 * else: each component authenticates as its own ServiceAccount (TokenRequest) and asks the real
 * authorizer with SelfSubjectAccessReviews, for every (verb, group, resource, subresource) in a
 * universe (everything either the manifests or the chart's rules name, plus sensitive extras) and
 * every scope (all namespaces, the release namespace, watched namespaces, {@code default}, a
 * namespace outside). The expected answers follow the manifests' rules and how their comments say
 * to bind them (ClusterRoles by default; Roles in each watched namespace with watchNamespaces, plus
 * the node-events Role in {@code default}; the node-tidy and DRA ClusterRoles when enabled).
 * RbacTest checks the chart's rules equal the manifests' text; this proves them on a real
 * authorizer.
 */
@ExtendWith(RealKube.class)
class ChartRbacOnRealApiServerIT {

  static final List<String> VERBS =
      List.of("get", "list", "watch", "create", "update", "patch", "delete", "deletecollection");

  /** Sensitive (group, resource[/subresource]) pairs neither component may touch. */
  static final List<String> EXTRAS =
      List.of(
          "/pods/exec",
          "/pods/log",
          "/serviceaccounts/token",
          "/serviceaccounts",
          "/nodes/proxy",
          "/namespaces",
          "akri.sh/instances/status",
          "apps/daemonsets",
          "apps/deployments",
          "rbac.authorization.k8s.io/clusterroles",
          "rbac.authorization.k8s.io/rolebindings",
          "apiextensions.k8s.io/customresourcedefinitions",
          "coordination.k8s.io/leases");

  static final Set<String> RBAC_KINDS =
      Set.of("ServiceAccount", "Role", "RoleBinding", "ClusterRole", "ClusterRoleBinding");

  /** One RBAC rule: verbs, API groups, resources ("res" or "res/sub"). */
  record Rule(List<String> verbs, List<String> groups, List<String> resources) {
    boolean allows(String verb, String group, String resource) {
      return verbs.contains(verb) && groups.contains(group) && resources.contains(resource);
    }
  }

  /** Rules bound in one scope: "" (a ClusterRoleBinding: everywhere) or one namespace. */
  record Grant(String scope, List<Rule> rules) {
    boolean allows(Access access) {
      return (scope.isEmpty() || scope.equals(access.namespace()))
          && rules.stream()
              .anyMatch(r -> r.allows(access.verb(), access.group(), access.resource()));
    }
  }

  /** One question to the authorizer; namespace "" = cluster-wide / all namespaces. */
  record Access(String verb, String group, String resource, String namespace) {
    @Override
    public String toString() {
      return verb
          + " "
          + (group.isEmpty() ? "core" : group)
          + "/"
          + resource
          + (namespace.isEmpty() ? " (all namespaces)" : " in " + namespace);
    }
  }

  private static ExecutorService pool;

  @BeforeAll
  static void setUp(RealApiServer api) throws IOException {
    ChartOnServer.ensureCrds(api);
    pool = Executors.newFixedThreadPool(4);
  }

  @AfterAll
  static void tearDown() {
    pool.shutdownNow();
  }

  static List<Rule> canonical(String file, String kind, String name) throws IOException {
    RenderedChart manifest = RenderedChart.parse(Files.readString(Path.of("..").resolve(file)));
    return rules(manifest.one(kind, name));
  }

  static List<Rule> rules(Map<String, Object> role) {
    return maps(role.get("rules")).stream()
        .map(
            r ->
                new Rule(
                    strings(r.get("verbs")),
                    strings(r.get("apiGroups")),
                    strings(r.get("resources"))))
        .toList();
  }

  static final String AGENT = "agent/rbac/agent-rbac.yaml";
  static final String CONTROLLER = "controller/rbac/controller-rbac.yaml";

  @Test
  void defaultValuesGrantTheCanonicalRulesInEveryNamespace(RealApiServer api) throws IOException {
    String release = api.namespace("rbac-default");
    String outside = api.namespace("rbac-outside");
    RenderedChart chart = applyRbac(api, release, List.of());

    List<Grant> agent =
        List.of(
            new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent")),
            new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent-node-tidy")));
    List<Grant> controller = controllerGrants(List.of());
    List<String> scopes = List.of("", release, outside, "default");

    proveExactly(api, chart, release, "jakri-agent", agent, scopes);
    proveExactly(api, chart, release, "jakri-controller", controller, scopes);
    assertThat(
            allowed(
                api.serviceAccountClient(release, "jakri-agent"),
                access("patch", "akri.sh", "instances", outside)))
        .as("the agent patches Instances (JSON patch)")
        .isTrue();
  }

  @Test
  void watchNamespacesGrantOnlyThoseNamespaces(RealApiServer api) throws IOException {
    String release = api.namespace("rbac-watch");
    String teamA = api.namespace("rbac-team-a");
    String teamB = api.namespace("rbac-team-b");
    String outside = api.namespace("rbac-outside");
    List<String> watched = List.of(teamA, teamB);
    RenderedChart chart =
        applyRbac(api, release, List.of("watchNamespaces[0]", teamA, "watchNamespaces[1]", teamB));

    List<Grant> agent = new ArrayList<>();
    for (String ns : watched) {
      agent.add(new Grant(ns, canonical(AGENT, "ClusterRole", "jakri-agent")));
    }
    agent.add(new Grant("default", canonical(AGENT, "Role", "jakri-agent-node-events")));
    agent.add(new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent-node-tidy")));
    List<String> scopes = List.of("", release, teamA, teamB, outside, "default");

    proveExactly(api, chart, release, "jakri-agent", agent, scopes);
    proveExactly(api, chart, release, "jakri-controller", controllerGrants(watched), scopes);

    // And a real request: a watched namespace answers, one outside is forbidden (403).
    KubernetesClient asAgent = api.serviceAccountClient(release, "jakri-agent");
    assertThat(
            asAgent
                .genericKubernetesResources("akri.sh/v0", "Configuration")
                .inNamespace(teamA)
                .list()
                .getItems())
        .isEmpty();
    for (String ns : List.of(outside, release)) {
      assertThatThrownBy(
              () ->
                  asAgent
                      .genericKubernetesResources("akri.sh/v0", "Configuration")
                      .inNamespace(ns)
                      .list())
          .isInstanceOf(KubernetesClientException.class)
          .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(403));
    }
  }

  @Test
  void draAddsTheCanonicalDraRules(RealApiServer api) throws IOException {
    String release = api.namespace("rbac-dra");
    String outside = api.namespace("rbac-outside");
    RenderedChart chart = applyRbac(api, release, List.of("agent.dra.enabled", "true"));

    List<Grant> agent =
        List.of(
            new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent")),
            new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent-node-tidy")),
            new Grant("", canonical(AGENT, "ClusterRole", "jakri-agent-dra")));
    List<String> scopes = List.of("", release, outside);

    proveExactly(api, chart, release, "jakri-agent", agent, scopes);
    proveExactly(api, chart, release, "jakri-controller", controllerGrants(List.of()), scopes);
  }

  /**
   * controller.instanceObjects.resources adds, cluster-wide, exactly one rule per API group for the
   * listed kinds, and nothing else: the controller may create a listed kind, not an unlisted one.
   */
  @Test
  void instanceObjectsAddTheListedKindsOnly(RealApiServer api) throws IOException {
    String release = api.namespace("rbac-objects");
    String outside = api.namespace("rbac-outside");
    RenderedChart chart =
        applyRbac(
            api,
            release,
            List.of(
                "controller.instanceObjects.resources[0]", "configmaps",
                "controller.instanceObjects.resources[1]", "deployments.apps",
                "controller.instanceObjects.resources[2]", "widgets.example.com"));

    List<String> verbs = List.of("get", "list", "watch", "create", "patch", "delete");
    List<Grant> controller = new ArrayList<>(controllerGrants(List.of()));
    controller.add(
        new Grant(
            "",
            List.of(
                new Rule(verbs, List.of(""), List.of("configmaps")),
                new Rule(verbs, List.of("apps"), List.of("deployments")),
                new Rule(verbs, List.of("example.com"), List.of("widgets")))));
    proveExactly(
        api, chart, release, "jakri-controller", controller, List.of("", release, outside));

    KubernetesClient asController = api.serviceAccountClient(release, "jakri-controller");
    assertThat(allowed(asController, access("create", "", "configmaps", outside)))
        .as("create configmaps (listed)")
        .isTrue();
    assertThat(allowed(asController, access("create", "", "secrets", outside)))
        .as("create secrets (not listed)")
        .isFalse();
  }

  /**
   * With watchNamespaces, controller.instanceObjects.resources are granted only in the watched
   * namespaces (a Role in each), and clusterScopedResources alone cluster-wide.
   */
  @Test
  void instanceObjectsUnderWatchNamespacesStayInThoseNamespaces(RealApiServer api)
      throws IOException {
    String release = api.namespace("rbac-objects-watch");
    String teamA = api.namespace("rbac-objects-team-a");
    String outside = api.namespace("rbac-objects-outside");
    RenderedChart chart =
        applyRbac(
            api,
            release,
            List.of(
                "watchNamespaces[0]", teamA,
                "controller.instanceObjects.resources[0]", "configmaps",
                "controller.instanceObjects.resources[1]", "deployments.apps",
                "controller.instanceObjects.clusterScopedResources[0]",
                    "clusterwidgets.example.com"));

    List<String> verbs = List.of("get", "list", "watch", "create", "patch", "delete");
    List<Grant> controller = new ArrayList<>(controllerGrants(List.of(teamA)));
    controller.add(
        new Grant(
            teamA,
            List.of(
                new Rule(verbs, List.of(""), List.of("configmaps")),
                new Rule(verbs, List.of("apps"), List.of("deployments")))));
    controller.add(
        new Grant("", List.of(new Rule(verbs, List.of("example.com"), List.of("clusterwidgets")))));
    proveExactly(
        api, chart, release, "jakri-controller", controller, List.of("", release, teamA, outside));

    KubernetesClient asController = api.serviceAccountClient(release, "jakri-controller");
    assertThat(allowed(asController, access("create", "", "configmaps", teamA)))
        .as("create configmaps in the watched namespace")
        .isTrue();
    assertThat(allowed(asController, access("create", "", "configmaps", outside)))
        .as("create configmaps outside the watched namespaces")
        .isFalse();
    assertThat(allowed(asController, access("create", "example.com", "clusterwidgets", "")))
        .as("create a cluster-scoped kind")
        .isTrue();
  }

  private static List<Grant> controllerGrants(List<String> watched) throws IOException {
    List<Grant> grants = new ArrayList<>();
    grants.add(new Grant("", canonical(CONTROLLER, "ClusterRole", "jakri-controller-nodes")));
    List<Rule> rules = canonical(CONTROLLER, "ClusterRole", "jakri-controller");
    if (watched.isEmpty()) {
      grants.add(new Grant("", rules));
    } else {
      watched.forEach(ns -> grants.add(new Grant(ns, rules)));
    }
    return grants;
  }

  /** Renders the chart in {@code release} and creates its RBAC objects and ServiceAccounts. */
  private static RenderedChart applyRbac(RealApiServer api, String release, List<String> sets) {
    RenderedChart chart = RenderedChart.render(release, List.of(), sets);
    KubernetesClient admin = api.admin();
    int applied = 0;
    for (Map<String, Object> object : chart.objects()) {
      if (RBAC_KINDS.contains(object.get("kind"))) {
        admin.resource(ChartOnServer.generic(admin, object)).create();
        applied++;
      }
    }
    assertThat(applied).as("RBAC objects rendered").isGreaterThan(4);
    return chart;
  }

  /**
   * Asks the authorizer, as {@code serviceAccount}, every access of the universe in every scope;
   * what it allows must be exactly what {@code grants} allow.
   */
  private static void proveExactly(
      RealApiServer api,
      RenderedChart chart,
      String release,
      String serviceAccount,
      List<Grant> grants,
      List<String> scopes) {
    KubernetesClient client = api.serviceAccountClient(release, serviceAccount);
    List<Access> universe = universe(chart, grants, scopes);
    List<Future<Boolean>> answers = new ArrayList<>();
    for (Access access : universe) {
      answers.add(pool.submit(() -> allowed(client, access)));
    }
    Set<String> missing = new TreeSet<>();
    Set<String> extra = new TreeSet<>();
    int needs = 0;
    for (int i = 0; i < universe.size(); i++) {
      Access access = universe.get(i);
      boolean expected = grants.stream().anyMatch(g -> g.allows(access));
      boolean actual;
      try {
        actual = answers.get(i).get();
      } catch (InterruptedException | ExecutionException e) {
        throw new AssertionError("SelfSubjectAccessReview for " + access + " failed", e);
      }
      needs += expected ? 1 : 0;
      if (expected && !actual) {
        missing.add(access.toString());
      } else if (actual && !expected) {
        extra.add(access.toString());
      }
    }
    int checked = needs;
    assertSoftly(
        soft -> {
          soft.assertThat(checked).as(serviceAccount + ": needs checked").isPositive();
          soft.assertThat(missing)
              .as(serviceAccount + ": needs of the canonical manifest the chart's RBAC denies")
              .isEmpty();
          soft.assertThat(extra)
              .as(serviceAccount + ": allowed by the chart's RBAC beyond the canonical manifest")
              .isEmpty();
        });
  }

  /**
   * Every (verb, group, resource) the canonical grants or the chart's rendered rules name, the
   * common verbs and {@link #EXTRAS}, in every scope.
   */
  private static List<Access> universe(
      RenderedChart chart, List<Grant> grants, List<String> scopes) {
    Set<String> verbs = new LinkedHashSet<>(VERBS);
    Set<String> resources = new LinkedHashSet<>(EXTRAS);
    List<Rule> all = new ArrayList<>();
    grants.forEach(g -> all.addAll(g.rules()));
    for (String kind : List.of("Role", "ClusterRole")) {
      chart.ofKind(kind).forEach(role -> all.addAll(rules(role)));
    }
    for (Rule rule : all) {
      verbs.addAll(rule.verbs());
      for (String group : rule.groups()) {
        for (String resource : rule.resources()) {
          resources.add(group + "/" + resource);
        }
      }
    }
    List<Access> out = new ArrayList<>();
    for (String scope : scopes) {
      for (String groupResource : resources) {
        int slash = groupResource.indexOf('/');
        for (String verb : verbs) {
          out.add(
              new Access(
                  verb,
                  groupResource.substring(0, slash),
                  groupResource.substring(slash + 1),
                  scope));
        }
      }
    }
    return out;
  }

  private static Access access(String verb, String group, String resource, String namespace) {
    return new Access(verb, group, resource, namespace);
  }

  /**
   * The real authorizer's answer to {@code client}'s SelfSubjectAccessReview for {@code access}.
   */
  static boolean allowed(KubernetesClient client, Access access) {
    String[] parts = access.resource().split("/", 2);
    SelfSubjectAccessReview review =
        new SelfSubjectAccessReviewBuilder()
            .withNewSpec()
            .withNewResourceAttributes()
            .withVerb(access.verb())
            .withGroup(access.group())
            .withResource(parts[0])
            .withSubresource(parts.length > 1 ? parts[1] : null)
            .withNamespace(access.namespace().isEmpty() ? null : access.namespace())
            .endResourceAttributes()
            .endSpec()
            .build();
    return client
        .authorization()
        .v1()
        .selfSubjectAccessReview()
        .create(review)
        .getStatus()
        .getAllowed();
  }
}
