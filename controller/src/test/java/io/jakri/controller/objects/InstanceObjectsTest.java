package io.jakri.controller.objects;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.objects.InstanceObjects.Desired;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class InstanceObjectsTest {

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  private static final ServedResource CONFIG_MAPS =
      new ServedResource("", "v1", "configmaps", "ConfigMap", true);
  private static final ServedResource PRIORITY_CLASSES =
      new ServedResource("scheduling.k8s.io", "v1", "priorityclasses", "PriorityClass", false);

  private final ObjectKinds kinds =
      ObjectKinds.of(
          AllowedResource.parseList(
              "configmaps,priorityclasses.scheduling.k8s.io,widgets.example.com"),
          List.of(CONFIG_MAPS, PRIORITY_CLASSES),
          Map.of(
              new AllowedResource("widgets", "example.com"),
              "the API server serves no group example.com"));

  private final InstanceObjects objects = new InstanceObjects(serialization, () -> kinds);

  private Configuration configuration(String objectsYaml) {
    Configuration c =
        serialization.unmarshal(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata: {name: cam, namespace: devices, uid: c-1, generation: 1}
            spec:
              discoveryHandler: {name: simulated}
              instanceObjects:
            """
                + objectsYaml.indent(4),
            Configuration.class);
    return c;
  }

  private Instance instance(Map<String, String> properties) {
    Instance i = new Instance();
    i.getMetadata().setName("cam-0a1b2c");
    i.getMetadata().setNamespace("devices");
    i.getMetadata().setUid("i-1");
    i.setSpec(new io.jakri.crd.InstanceSpec());
    i.getSpec().setConfigurationName("cam");
    i.getSpec().setNodes(List.of("node-a"));
    i.getSpec().setBrokerProperties(properties);
    return i;
  }

  @Test
  void rendersLabelsOwnerAndHashForANamespacedKindAndNoOwnerForAClusterScopedOne() {
    List<Desired> out =
        objects.render(
            configuration(
                """
                - apiVersion: v1
                  kind: ConfigMap
                  data: {ip: "{{PROPERTY:IP}}"}
                - apiVersion: scheduling.k8s.io/v1
                  kind: PriorityClass
                  metadata: {name: "{{NAMESPACE}}-{{INSTANCE_NAME}}"}
                  value: 10
                """),
            instance(Map.of("IP", "10.0.0.7")));
    assertThat(out).hasSize(2).allMatch(d -> d instanceof Desired.Rendered);
    GenericKubernetesResource cm = ((Desired.Rendered) out.get(0)).object();
    assertThat(cm.getMetadata().getName()).isEqualTo("cam-0a1b2c-configmap");
    assertThat(cm.getMetadata().getNamespace()).isEqualTo("devices");
    assertThat(cm.getMetadata().getLabels())
        .containsEntry(BrokerLabels.INSTANCE, "cam-0a1b2c")
        .containsEntry(BrokerLabels.CONFIGURATION, "cam")
        .containsEntry(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
        .doesNotContainKey(InstanceObjects.INSTANCE_NAMESPACE);
    assertThat(cm.getMetadata().getOwnerReferences())
        .singleElement()
        .satisfies(o -> assertThat(o.getUid()).isEqualTo("i-1"));
    assertThat(cm.getMetadata().getAnnotations().get(BrokerLabels.TEMPLATE_HASH)).hasSize(16);
    assertThat(serialization.asJson(cm)).contains("\"data\":{\"ip\":\"10.0.0.7\"}");

    Desired.Rendered pc = (Desired.Rendered) out.get(1);
    assertThat(pc.where()).isEqualTo(PRIORITY_CLASSES);
    assertThat(pc.object().getMetadata().getName()).isEqualTo("devices-cam-0a1b2c");
    assertThat(pc.object().getMetadata().getNamespace()).isNull();
    assertThat(pc.object().getMetadata().getOwnerReferences()).isNullOrEmpty();
    assertThat(pc.object().getMetadata().getLabels())
        .containsEntry(InstanceObjects.INSTANCE_NAMESPACE, "devices");
  }

  @Test
  void theHashFollowsTheRenderedObjectAndNothingElse() {
    String template = "- {apiVersion: v1, kind: ConfigMap, data: {ip: \"{{PROPERTY:IP}}\"}}\n";
    String a = hash(objects.render(configuration(template), instance(Map.of("IP", "1"))));
    String again = hash(objects.render(configuration(template), instance(Map.of("IP", "1"))));
    String b = hash(objects.render(configuration(template), instance(Map.of("IP", "2"))));
    assertThat(a).isEqualTo(again).isNotEqualTo(b);
  }

  private static String hash(List<Desired> out) {
    return ((Desired.Rendered) out.get(0))
        .object()
        .getMetadata()
        .getAnnotations()
        .get(BrokerLabels.TEMPLATE_HASH);
  }

  @Test
  void aKindNotAllowedOrNotServedAndAMissingPropertyAreRefusedEachWithItsReason() {
    List<Desired> out =
        objects.render(
            configuration(
                """
                - {apiVersion: v1, kind: Secret}
                - {apiVersion: example.com/v1, kind: Widget}
                - {apiVersion: v1, kind: ConfigMap, data: {a: "{{PROPERTY:NOPE}}"}}
                - {apiVersion: v1, kind: ConfigMap, metadata: {name: "{{INSTANCE_NAME}}-ok"}}
                """),
            instance(Map.of()));
    assertThat(out.get(0))
        .isEqualTo(
            new Desired.Refused(
                0,
                InstanceObjects.NOT_ALLOWED,
                "instanceObjects[0]: Secret (v1) is not among the kinds the controller may create"
                    + " (--instance-object-resources: configmaps,"
                    + " priorityclasses.scheduling.k8s.io, widgets.example.com); not served by the"
                    + " API server: widgets.example.com (the API server serves no group"
                    + " example.com)"));
    assertThat(out.get(1)).isInstanceOf(Desired.Refused.class);
    assertThat(((Desired.Refused) out.get(1)).reason()).isEqualTo(InstanceObjects.NOT_ALLOWED);
    assertThat(out.get(2))
        .isEqualTo(
            new Desired.Refused(
                2,
                InstanceObjects.UNRENDERED,
                "instanceObjects[2]: {{PROPERTY:NOPE}}: the Instance has no property NOPE"));
    assertThat(out.get(3)).isInstanceOf(Desired.Rendered.class);
  }

  @Test
  void theFlagTakesResourcesAsRbacNamesThemAndRefusesAnythingElseInOneLine() {
    assertThat(AllowedResource.parseList(" configmaps, deployments.apps,,configmaps"))
        .containsExactly(
            new AllowedResource("configmaps", ""), new AllowedResource("deployments", "apps"));
    assertThatThrownBy(() -> AllowedResource.parseList("configmaps,Deployments.apps"))
        .hasMessage(
            "'Deployments.apps' is not resource[.group] in lower case, as RBAC names it"
                + " (configmaps, deployments.apps)");
  }
}
