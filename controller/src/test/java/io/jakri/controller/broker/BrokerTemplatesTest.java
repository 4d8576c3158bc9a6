package io.jakri.controller.broker;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.NodeSelectorRequirement;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceSpec;
import java.util.List;
import org.junit.jupiter.api.Test;

class BrokerTemplatesTest {

  final KubernetesSerialization serialization = new KubernetesSerialization();
  final BrokerTemplates templates = new BrokerTemplates(serialization);

  Configuration configuration(String podSpecYaml) {
    return serialization.unmarshal(
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: cam
          namespace: ns
          uid: c-uid
          generation: 3
        spec:
          discoveryHandler:
            name: simulated
          brokerSpec:
            brokerPodSpec:
        %s
        """
            .formatted(podSpecYaml.indent(6)),
        Configuration.class);
  }

  Instance instance() {
    Instance i = new Instance();
    i.getMetadata().setName("cam-8120fe");
    i.getMetadata().setNamespace("ns");
    i.getMetadata().setUid("i-uid");
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("cam");
    spec.setNodes(List.of("n1"));
    i.setSpec(spec);
    return i;
  }

  static final String SPEC =
      """
      initContainers:
        - name: init
          image: busybox
          resources:
            requests:
              "{{PLACEHOLDER}}": "1"
      containers:
        - name: broker
          image: nginx
          resources:
            limits:
              "{{PLACEHOLDER}}": "1"
              memory: 64Mi
            requests:
              "{{PLACEHOLDER}}": "1"
      """;

  @Test
  void placeholderKeysInLimitsAndRequestsOfAllContainersBecomeTheInstanceResource() {
    Pod pod = templates.pod(configuration(SPEC), instance(), "n1").orElseThrow();
    var broker = pod.getSpec().getContainers().get(0).getResources();
    assertThat(broker.getLimits())
        .containsOnlyKeys("akri.sh/cam-8120fe", "memory")
        .containsEntry("akri.sh/cam-8120fe", new Quantity("1"));
    assertThat(broker.getRequests()).containsOnlyKeys("akri.sh/cam-8120fe");
    assertThat(pod.getSpec().getInitContainers().get(0).getResources().getRequests())
        .containsOnlyKeys("akri.sh/cam-8120fe");
  }

  @Test
  void theConfigurationItselfIsNotModified() {
    Configuration c = configuration(SPEC);
    String before = serialization.asJson(c);
    templates.pod(c, instance(), "n1");
    assertThat(serialization.asJson(c)).isEqualTo(before);
  }

  @Test
  void podsArePinnedByAddingTheNodeToEveryExistingSelectorTerm() {
    String withAffinity =
        SPEC
            + """
            affinity:
              nodeAffinity:
                requiredDuringSchedulingIgnoredDuringExecution:
                  nodeSelectorTerms:
                    - matchExpressions:
                        - key: gpu
                          operator: Exists
                    - matchExpressions:
                        - key: fpga
                          operator: Exists
            """;
    Pod pod = templates.pod(configuration(withAffinity), instance(), "n1").orElseThrow();
    var terms =
        pod.getSpec()
            .getAffinity()
            .getNodeAffinity()
            .getRequiredDuringSchedulingIgnoredDuringExecution()
            .getNodeSelectorTerms();
    assertThat(terms).hasSize(2);
    for (var term : terms) {
      assertThat(term.getMatchExpressions()).hasSize(1);
      assertThat(term.getMatchFields())
          .extracting(NodeSelectorRequirement::getKey, NodeSelectorRequirement::getValues)
          .containsExactly(org.assertj.core.groups.Tuple.tuple("metadata.name", List.of("n1")));
    }
  }

  @Test
  void theTemplateHashFollowsTheSpec() {
    String a =
        templates
            .pod(configuration(SPEC), instance(), "n1")
            .orElseThrow()
            .getMetadata()
            .getAnnotations()
            .get(BrokerLabels.TEMPLATE_HASH);
    String same =
        templates
            .pod(configuration(SPEC), instance(), "n1")
            .orElseThrow()
            .getMetadata()
            .getAnnotations()
            .get(BrokerLabels.TEMPLATE_HASH);
    String edited =
        templates
            .pod(configuration(SPEC.replace("nginx", "nginx:2")), instance(), "n1")
            .orElseThrow()
            .getMetadata()
            .getAnnotations()
            .get(BrokerLabels.TEMPLATE_HASH);
    assertThat(a).isEqualTo(same).isNotEqualTo(edited);
  }

  @Test
  void noBrokerPodSpecMeansNoPod() {
    Configuration c = configuration(SPEC);
    c.getSpec().setBrokerSpec(null);
    assertThat(templates.pod(c, instance(), "n1")).isEmpty();
    assertThat(templates.job(c, instance())).isEmpty();
    assertThat(BrokerTemplates.hasBrokers(c)).isFalse();
  }
}
