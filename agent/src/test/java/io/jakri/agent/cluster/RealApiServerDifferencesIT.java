package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.FieldValidateable;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the real API server does that fabric8's mock never did, each shown against what jakri
 * writes: the Instance's {@code status} is pruned (it has no status subresource and no status
 * fields), a Configuration's status in a main-resource update is ignored, the CRDs' schema and CEL
 * rules refuse what the Java model would allow, strict field validation accepts every field the
 * agent writes, and the agents' watches come back after an API server restart (which also makes a
 * re-watch from an old resourceVersion fail with 410 Gone, so the informers must list again).
 */
@ExtendWith(RealKube.class)
class RealApiServerDifferencesIT {

  @TempDir Path tmp;
  RealApiServer api;
  ClusterHarness cluster;

  @BeforeEach
  void setUp(RealApiServer api) {
    this.api = api;
    cluster = new ClusterHarness(new RealApiPeer(api, "differences"), tmp);
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  static String device(String name, String node, String id) {
    return ClusterHarness.configuration(
        name,
        "static",
        1,
        "deviceMapping:\n  - hosts: ["
            + node
            + "]\n    devices:\n      - resourceName: example.com/"
            + name
            + "\n        instanceID: \""
            + id
            + "\"\n");
  }

  @Test
  void anInstanceStatusIsPrunedAndTheAgentWritesEveryFieldItSendsUnderStrictValidation()
      throws Exception {
    cluster.start("d1", Duration.ofSeconds(30));
    cluster.apply(device("diff-widget", "d1", "1"));
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.instances().size() == 1);
    Instance written = cluster.instances().get(0);

    // What the agent wrote carries no status, and nothing it sends is unknown to the schema: a
    // strict dry run of the same object (under another name) is accepted.
    GenericKubernetesResource raw =
        cluster
            .admin
            .genericKubernetesResources("akri.sh/v0", "Instance")
            .inNamespace(cluster.ns)
            .withName(written.getMetadata().getName())
            .get();
    assertThat(raw.getAdditionalProperties()).doesNotContainKey("status");
    Instance copy = new Instance();
    copy.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(written.getMetadata().getName() + "-copy")
            .withNamespace(cluster.ns)
            .build());
    copy.setSpec(written.getSpec());
    cluster
        .admin
        .resource(copy)
        .dryRun()
        .fieldValidation(FieldValidateable.Validation.STRICT)
        .create();

    // The mock kept any status; the real server prunes it: Instance has no status fields.
    GenericKubernetesResource withStatus =
        cluster
            .admin
            .getKubernetesSerialization()
            .unmarshal(
                """
                apiVersion: akri.sh/v0
                kind: Instance
                metadata: {name: hand-made}
                spec: {configurationName: diff-widget, capacity: 1, cdiName: x, shared: false,
                       nodes: [d1], deviceUsage: {hand-made-0: ""}}
                status: {claimedBy: someone}
                """,
                GenericKubernetesResource.class);
    GenericKubernetesResource stored =
        cluster.admin.resource(withStatus).inNamespace(cluster.ns).create();
    assertThat((Map<?, ?>) stored.getAdditionalProperties().getOrDefault("status", Map.of()))
        .isEmpty();
  }

  @Test
  void aStatusInAConfigurationUpdateIsIgnoredByTheServer() {
    Configuration c = cluster.apply(device("diff-status", "nobody", "1"));
    c.setStatus(new io.jakri.crd.ConfigurationStatus());
    c.getStatus().setObservedGeneration(42L);
    Configuration updated = cluster.admin.resource(c).update();
    assertThat(updated.getStatus() == null ? null : updated.getStatus().getObservedGeneration())
        .isNull();
  }

  @Test
  void theCrdsSchemaAndCelRulesRefuseWhatTheJavaModelAllows() throws Exception {
    Instance duplicateNodes = instance("diff-dup", List.of("d1", "d1"));
    assertThatThrownBy(() -> cluster.admin.resource(duplicateNodes).create())
        .isInstanceOf(KubernetesClientException.class)
        .satisfies(e -> assertThat(((KubernetesClientException) e).getCode()).isEqualTo(422))
        .hasMessageContaining("Duplicate value");

    Instance longName = instance("x".repeat(64), List.of("d1"));
    assertThatThrownBy(() -> cluster.admin.resource(longName).create())
        .isInstanceOf(KubernetesClientException.class)
        .hasMessageContaining("at most 63 characters");

    // The longest name the agent makes (a 56-character Configuration name + "-" + 6 hex) passes.
    String longest = "c".repeat(56);
    cluster.start("d1", Duration.ofSeconds(30));
    cluster.apply(device(longest, "d1", "7"));
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(cluster.instances())
                    .extracting(i -> i.getMetadata().getName())
                    .anyMatch(n -> n.startsWith(longest) && n.length() == 63));
  }

  @Test
  void watchesComeBackAfterAnApiServerRestart() throws Exception {
    cluster.start("d1", Duration.ofSeconds(30));
    cluster.apply(device("diff-before", "d1", "1"));
    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.instances().size() == 1);

    api.restart();

    // A Configuration created after the restart reaches the agent only through a new watch.
    cluster.apply(device("diff-after", "d1", "2"));
    await()
        .atMost(Duration.ofSeconds(60))
        .untilAsserted(
            () ->
                assertThat(cluster.instances())
                    .extracting(i -> i.getSpec().getConfigurationName())
                    .containsExactlyInAnyOrder("diff-before", "diff-after"));
    String after =
        cluster.instances().stream()
            .filter(i -> i.getSpec().getConfigurationName().equals("diff-after"))
            .findFirst()
            .orElseThrow()
            .getMetadata()
            .getName();
    cluster.awaitAllocatable("d1", "akri.sh/" + after, 1);
    // And a deletion after the restart is seen too.
    cluster
        .admin
        .resources(Configuration.class)
        .inNamespace(cluster.ns)
        .withName("diff-before")
        .delete();
    await()
        .atMost(Duration.ofSeconds(30))
        .untilAsserted(
            () ->
                assertThat(cluster.instances())
                    .extracting(i -> i.getSpec().getConfigurationName())
                    .containsExactly("diff-after"));
  }

  private Instance instance(String name, List<String> nodes) {
    Instance i = new Instance();
    i.setMetadata(
        new io.fabric8.kubernetes.api.model.ObjectMetaBuilder()
            .withName(name)
            .withNamespace(cluster.ns)
            .build());
    io.jakri.crd.InstanceSpec spec = new io.jakri.crd.InstanceSpec();
    spec.setConfigurationName("diff");
    spec.setCapacity(1);
    spec.setCdiName("x");
    spec.setShared(true);
    spec.setNodes(nodes);
    spec.setDeviceUsage(Map.of());
    i.setSpec(spec);
    return i;
  }
}
