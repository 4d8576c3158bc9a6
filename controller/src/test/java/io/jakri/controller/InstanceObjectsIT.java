package io.jakri.controller;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConfigMap;
import io.fabric8.kubernetes.api.model.ConfigMapBuilder;
import io.fabric8.kubernetes.api.model.apps.Deployment;
import io.fabric8.kubernetes.api.model.authorization.v1.SelfSubjectAccessReviewBuilder;
import io.fabric8.kubernetes.api.model.scheduling.v1.PriorityClass;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.objects.AllowedResource;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.reconcile.ConfigurationReconciler;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.time.Duration;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

/**
 * {@code spec.instanceObjects} on the real API server (RBAC on, the controller on its own
 * ServiceAccount token): objects of any allowed kind rendered per Instance, created, updated when
 * the Instance or the Configuration changes, re-created when deleted by hand and deleted when the
 * Instance goes (namespaced ones owned by the Instance, a cluster-scoped one labelled with the
 * Instance's namespace); a kind the controller may not create is refused and reported in the
 * Configuration's status; an object of the same name that is not the controller's is left alone.
 *
 * <p>The controller's RBAC for the three allowed kinds is granted here as the chart generates it
 * from {@code controller.instanceObjects.resources} (the chart's own test checks the rendering). No
 * garbage collector runs: whatever goes away goes because the controller deleted it.
 */
@ExtendWith(RealKube.class)
class InstanceObjectsIT {

  static final Duration WAIT = Duration.ofSeconds(30);
  static final String ALLOWED = "configmaps,deployments.apps,priorityclasses.scheduling.k8s.io";

  static final String OBJECTS_RBAC =
      """
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRole
      metadata: {name: jakri-controller-instance-objects-it}
      rules:
        - apiGroups: [""]
          resources: [configmaps]
          verbs: [get, list, watch, create, patch, delete]
        - apiGroups: [apps]
          resources: [deployments]
          verbs: [get, list, watch, create, patch, delete]
        - apiGroups: [scheduling.k8s.io]
          resources: [priorityclasses]
          verbs: [get, list, watch, create, patch, delete]
      ---
      apiVersion: rbac.authorization.k8s.io/v1
      kind: ClusterRoleBinding
      metadata: {name: jakri-controller-instance-objects-it}
      roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: jakri-controller-instance-objects-it}
      subjects:
        - {kind: ServiceAccount, name: jakri-controller, namespace: akri}
      """;

  RealCluster cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new RealCluster(api, "objects");
    api.apply(OBJECTS_RBAC);
    cluster.node("n1");
  }

  @AfterEach
  void tearDown() {
    cluster
        .client
        .resources(PriorityClass.class)
        .withLabel(InstanceObjects.INSTANCE_NAMESPACE, cluster.ns)
        .delete();
    cluster.close();
  }

  ControllerOptions options() {
    return cluster.options().withInstanceObjectResources(AllowedResource.parseList(ALLOWED));
  }

  Configuration configuration(String configMapData, boolean withSecret) {
    return cluster.configuration(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: cam
        spec:
          discoveryHandler:
            name: simulated
          instanceObjects:
            - apiVersion: v1
              kind: ConfigMap
              metadata:
                labels: {team: "{{CONFIGURATION_NAME}}"}
              data: %s
            - apiVersion: apps/v1
              kind: Deployment
              metadata:
                name: "{{INSTANCE_NAME}}-viewer"
              spec:
                replicas: 1
                selector: {matchLabels: {viewer: "{{INSTANCE_NAME}}"}}
                template:
                  metadata: {labels: {viewer: "{{INSTANCE_NAME}}"}}
                  spec:
                    containers:
                      - name: viewer
                        image: busybox
                        resources: {limits: {"{{PLACEHOLDER}}": "1"}}
            - apiVersion: scheduling.k8s.io/v1
              kind: PriorityClass
              metadata:
                name: "{{NAMESPACE}}-{{INSTANCE_NAME}}"
              value: 1000
              description: "for {{INSTANCE_NAME}} on {{NODE_NAME}}"
        %s
        """
            .formatted(
                configMapData,
                withSecret
                    ? """
                          - apiVersion: v1
                            kind: Secret
                            stringData: {a: b}
                      """
                    : ""));
  }

  Instance instance(Configuration c, String name, String ip) {
    Instance i = cluster.instance(c, name, false, "n1");
    return cluster
        .client
        .resource(i)
        .edit(
            x -> {
              x.getSpec().setBrokerProperties(new LinkedHashMap<>(Map.of("IP", ip)));
              return x;
            });
  }

  Optional<Condition> brokersReady() {
    Configuration c =
        cluster.client.resources(Configuration.class).inNamespace(cluster.ns).withName("cam").get();
    return c.getStatus() == null
        ? Optional.empty()
        : c.getStatus().getConditions().stream()
            .filter(x -> ConfigurationReconciler.CONDITION.equals(x.getType()))
            .findFirst();
  }

  ConfigMap configMap(String name) {
    return cluster.client.configMaps().inNamespace(cluster.ns).withName(name).get();
  }

  @Test
  void objectsOfAllowedKindsFollowTheirInstanceAndAForbiddenKindIsReported() throws Exception {
    Configuration c =
        configuration(
            "{instance: \"{{INSTANCE_NAME}}\", ip: \"{{PROPERTY:IP}}\", resource:"
                + " \"{{RESOURCE_NAME}}\", nodes: \"{{NODES}}\"}",
            true);
    Instance instance = instance(c, "cam-aaaaaa", "10.0.0.7");
    cluster.start(options());

    String cm = "cam-aaaaaa-configmap";
    String pc = cluster.ns + "-cam-aaaaaa";
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              ConfigMap map = configMap(cm);
              assertThat(map)
                  .as("the controller's failed requests: %s", cluster.refusals.all())
                  .isNotNull();
              assertThat(map.getData())
                  .containsExactlyInAnyOrderEntriesOf(
                      Map.of(
                          "instance", "cam-aaaaaa",
                          "ip", "10.0.0.7",
                          "resource", "akri.sh/cam-aaaaaa",
                          "nodes", "n1"));
              assertThat(map.getMetadata().getLabels())
                  .containsEntry("team", "cam")
                  .containsEntry(BrokerLabels.INSTANCE, "cam-aaaaaa")
                  .containsEntry(BrokerLabels.CONFIGURATION, "cam")
                  .containsEntry(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER);
              assertThat(map.getMetadata().getOwnerReferences())
                  .singleElement()
                  .satisfies(
                      o -> {
                        assertThat(o.getKind()).isEqualTo("Instance");
                        assertThat(o.getUid()).isEqualTo(instance.getMetadata().getUid());
                      });
              Deployment d =
                  cluster
                      .client
                      .apps()
                      .deployments()
                      .inNamespace(cluster.ns)
                      .withName("cam-aaaaaa-viewer")
                      .get();
              assertThat(d).isNotNull();
              assertThat(
                      d.getSpec()
                          .getTemplate()
                          .getSpec()
                          .getContainers()
                          .get(0)
                          .getResources()
                          .getLimits())
                  .containsOnlyKeys("akri.sh/cam-aaaaaa");
              PriorityClass p = cluster.client.resources(PriorityClass.class).withName(pc).get();
              assertThat(p).isNotNull();
              assertThat(p.getValue()).isEqualTo(1000);
              assertThat(p.getDescription()).isEqualTo("for cam-aaaaaa on n1");
              assertThat(p.getMetadata().getOwnerReferences()).isNullOrEmpty();
              assertThat(p.getMetadata().getLabels())
                  .containsEntry(InstanceObjects.INSTANCE_NAMESPACE, cluster.ns);
              assertThat(brokersReady())
                  .hasValueSatisfying(
                      x -> {
                        assertThat(x.getStatus()).isEqualTo("False");
                        assertThat(x.getReason()).isEqualTo(InstanceObjects.NOT_ALLOWED);
                        assertThat(x.getMessage())
                            .isEqualTo(
                                "instanceObjects[3]: Secret (v1) is not among the kinds the"
                                    + " controller may create (--instance-object-resources:"
                                    + " configmaps, deployments.apps,"
                                    + " priorityclasses.scheduling.k8s.io)");
                      });
            });
    assertThat(cluster.client.secrets().inNamespace(cluster.ns).list().getItems())
        .noneMatch(s -> s.getMetadata().getName().startsWith("cam-"));

    // The Instance changes: its object follows.
    cluster
        .client
        .resources(Instance.class)
        .inNamespace(cluster.ns)
        .withName("cam-aaaaaa")
        .edit(
            x -> {
              x.getSpec().getBrokerProperties().put("IP", "10.0.0.8");
              return x;
            });
    await()
        .atMost(WAIT)
        .untilAsserted(() -> assertThat(configMap(cm).getData()).containsEntry("ip", "10.0.0.8"));

    // Deleted by hand: it comes back.
    String uid = configMap(cm).getMetadata().getUid();
    cluster.client.configMaps().inNamespace(cluster.ns).withName(cm).delete();
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              ConfigMap back = configMap(cm);
              assertThat(back).isNotNull();
              assertThat(back.getMetadata().getUid()).isNotEqualTo(uid);
            });

    // The Configuration changes: a key dropped from the template goes, the refused kind too.
    configuration("{instance: \"{{INSTANCE_NAME}}\"}", false);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(configMap(cm).getData())
                  .containsExactlyEntriesOf(Map.of("instance", "cam-aaaaaa"));
              assertThat(brokersReady())
                  .hasValueSatisfying(x -> assertThat(x.getStatus()).isEqualTo("True"));
            });

    // The Instance goes: so do its objects, the cluster-scoped one included.
    cluster.deleteInstance("cam-aaaaaa");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () -> {
              assertThat(configMap(cm)).isNull();
              assertThat(
                      cluster
                          .client
                          .apps()
                          .deployments()
                          .inNamespace(cluster.ns)
                          .withName("cam-aaaaaa-viewer")
                          .get())
                  .isNull();
              assertThat(cluster.client.resources(PriorityClass.class).withName(pc).get()).isNull();
            });
  }

  @Test
  void anObjectOfTheSameNameThatIsNotTheControllersIsLeftAlone() throws Exception {
    cluster
        .client
        .configMaps()
        .inNamespace(cluster.ns)
        .resource(
            new ConfigMapBuilder()
                .withNewMetadata()
                .withName("cam-bbbbbb-configmap")
                .endMetadata()
                .addToData("owner", "someone else")
                .build())
        .create();
    Configuration c = configuration("{instance: \"{{INSTANCE_NAME}}\"}", false);
    instance(c, "cam-bbbbbb", "10.0.0.9");
    cluster.start(options());

    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(brokersReady())
                    .hasValueSatisfying(
                        x -> {
                          assertThat(x.getStatus()).isEqualTo("False");
                          assertThat(x.getReason()).isEqualTo(InstanceObjects.CONFLICT);
                          assertThat(x.getMessage()).contains("exists and is not this Instance's");
                        }));
    assertThat(configMap("cam-bbbbbb-configmap").getData())
        .containsExactlyEntriesOf(Map.of("owner", "someone else"));
    // The other templates of the same Instance are still served.
    assertThat(
            cluster
                .client
                .apps()
                .deployments()
                .inNamespace(cluster.ns)
                .withName("cam-bbbbbb-viewer")
                .get())
        .isNotNull();

    cluster.deleteInstance("cam-bbbbbb");
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(
                        cluster
                            .client
                            .apps()
                            .deployments()
                            .inNamespace(cluster.ns)
                            .withName("cam-bbbbbb-viewer")
                            .get())
                    .isNull());
    assertThat(configMap("cam-bbbbbb-configmap").getData())
        .containsExactlyEntriesOf(Map.of("owner", "someone else"));
  }

  /**
   * A kind allowed by --instance-object-resources whose CRD is installed only after the controller
   * started: refused and reported while unserved, then adopted (watched, its objects created and
   * the condition True) without a restart.
   */
  @Test
  void aKindServedOnlyAfterTheControllerStartedIsAdoptedWithoutARestart(RealApiServer api)
      throws Exception {
    String group = cluster.ns + ".example.com";
    String crd = "gadgets." + group;
    Configuration c =
        cluster.configuration(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: cam
            spec:
              discoveryHandler:
                name: simulated
              instanceObjects:
                - apiVersion: %s/v1
                  kind: Gadget
                  spec: {ip: "{{PROPERTY:IP}}"}
            """
                .formatted(group));
    instance(c, "cam-cccccc", "10.0.0.3");
    cluster.start(
        cluster.options().withInstanceObjectResources(AllowedResource.parseList(crd)),
        Duration.ofMillis(300));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(brokersReady())
                    .hasValueSatisfying(
                        x -> {
                          assertThat(x.getStatus()).isEqualTo("False");
                          assertThat(x.getReason()).isEqualTo(InstanceObjects.NOT_ALLOWED);
                        }));

    try {
      // The grant first, as an operator would (the controller must not meet the kind before it
      // may read it), seen by the real authorizer before the CRD is installed.
      api.apply(
          """
          apiVersion: rbac.authorization.k8s.io/v1
          kind: ClusterRole
          metadata: {name: %1$s-it}
          rules:
            - apiGroups: [%2$s]
              resources: [gadgets]
              verbs: [get, list, watch, create, patch, delete]
          ---
          apiVersion: rbac.authorization.k8s.io/v1
          kind: ClusterRoleBinding
          metadata: {name: %1$s-it}
          roleRef: {apiGroup: rbac.authorization.k8s.io, kind: ClusterRole, name: %1$s-it}
          subjects:
            - {kind: ServiceAccount, name: jakri-controller, namespace: akri}
          """
              .formatted(crd, group));
      KubernetesClient asController = api.serviceAccountClient("akri", "jakri-controller");
      await()
          .atMost(WAIT)
          .until(
              () ->
                  asController
                      .authorization()
                      .v1()
                      .selfSubjectAccessReview()
                      .create(
                          new SelfSubjectAccessReviewBuilder()
                              .withNewSpec()
                              .withNewResourceAttributes()
                              .withVerb("get")
                              .withGroup(group)
                              .withResource("gadgets")
                              .withNamespace(cluster.ns)
                              .endResourceAttributes()
                              .endSpec()
                              .build())
                      .getStatus()
                      .getAllowed());
      api.apply(
          """
          apiVersion: apiextensions.k8s.io/v1
          kind: CustomResourceDefinition
          metadata: {name: %1$s}
          spec:
            group: %2$s
            scope: Namespaced
            names: {plural: gadgets, singular: gadget, kind: Gadget, listKind: GadgetList}
            versions:
              - name: v1
                served: true
                storage: true
                schema:
                  openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}
          """
              .formatted(crd, group));
      await()
          .atMost(WAIT)
          .untilAsserted(
              () -> {
                var gadget =
                    cluster
                        .client
                        .genericKubernetesResources(group + "/v1", "Gadget")
                        .inNamespace(cluster.ns)
                        .withName("cam-cccccc-gadget")
                        .get();
                assertThat(gadget)
                    .as("the controller's failed requests: %s", cluster.refusals.all())
                    .isNotNull();
                assertThat(gadget.getAdditionalProperties().get("spec"))
                    .isEqualTo(Map.of("ip", "10.0.0.3"));
                assertThat(brokersReady())
                    .hasValueSatisfying(x -> assertThat(x.getStatus()).isEqualTo("True"));
              });
    } finally {
      // Only the CRD: the controller still runs until tearDown, and taking its grant away first
      // would make its next reconcile a refusal. The grant names only this test's group.
      cluster.client.apiextensions().v1().customResourceDefinitions().withName(crd).delete();
    }
  }
}
