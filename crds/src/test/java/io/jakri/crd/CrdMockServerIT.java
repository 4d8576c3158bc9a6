package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.NonNamespaceOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The committed CRDs and the typed model against fabric8's mock API server in CRUD mode (one server
 * per test). The mock stores objects and keeps resourceVersions, so it shows create, read, update,
 * the status subresource and optimistic-concurrency conflicts; it does not evaluate OpenAPI or CEL
 * validation, defaulting or pruning (see {@link CelValidationRulesTest} for the rules, and the last
 * test here for the limitation).
 */
@EnableKubernetesMockClient(crud = true)
class CrdMockServerIT {

  private static final String NAMESPACE = "devices";

  private KubernetesClient client;

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  @BeforeEach
  void createCrds() {
    for (CustomResourceDefinition crd : Crds.load()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    }
  }

  @Test
  void committedCrdsAreAcceptedAndListed() {
    assertThat(client.apiextensions().v1().customResourceDefinitions().list().getItems())
        .extracting(crd -> crd.getMetadata().getName())
        .containsExactlyInAnyOrder(Crds.CONFIGURATION_CRD_NAME, Crds.INSTANCE_CRD_NAME);
    assertThat(
            client
                .apiextensions()
                .v1()
                .customResourceDefinitions()
                .withName(Crds.INSTANCE_CRD_NAME)
                .get()
                .getSpec()
                .getNames()
                .getShortNames())
        .containsExactly("akrii");
  }

  @Test
  void configurationIsCreatedReadAndUpdatedThroughTheTypedClient() {
    Configuration created = configurations().resource(zeroconf()).create();
    assertThat(created.getMetadata().getResourceVersion()).isNotBlank();

    Configuration read = configurations().withName("akri-zeroconf").get();
    assertThat(read.getSpec().getCapacity()).isEqualTo(2);
    assertThat(
            read.getSpec()
                .getBrokerSpec()
                .getBrokerPodSpec()
                .getContainers()
                .get(0)
                .getResources()
                .getLimits())
        .containsKey("{{PLACEHOLDER}}");

    read.getSpec().setCapacity(5);
    Configuration updated = configurations().resource(read).update();

    assertThat(updated.getMetadata().getResourceVersion())
        .isNotEqualTo(created.getMetadata().getResourceVersion());
    assertThat(configurations().withName("akri-zeroconf").get().getSpec().getCapacity())
        .isEqualTo(5);
    assertThat(configurations().list().getItems()).hasSize(1);
  }

  @Test
  void statusIsWrittenThroughTheStatusSubresource() {
    configurations().resource(zeroconf()).create();
    Configuration current = configurations().withName("akri-zeroconf").get();

    ConfigurationStatus status = new ConfigurationStatus();
    status.setObservedGeneration(1L);
    status.setInstances(3);
    status
        .getConditions()
        .add(
            new ConditionBuilder()
                .withType("Discovering")
                .withStatus("True")
                .withReason("HandlerRunning")
                .withMessage("zeroconf finds 3 devices")
                .withLastTransitionTime("2026-01-01T00:00:00Z")
                .build());
    NodeDiscoveryStatus node = new NodeDiscoveryStatus();
    node.setState("Discovering");
    node.setDevices(3);
    status.getNodes().put("node-a", node);
    current.setStatus(status);

    configurations().resource(current).updateStatus();

    ConfigurationStatus stored = configurations().withName("akri-zeroconf").get().getStatus();
    assertThat(stored.getInstances()).isEqualTo(3);
    assertThat(stored.getObservedGeneration()).isEqualTo(1L);
    assertThat(stored.getConditions())
        .singleElement()
        .satisfies(
            c -> {
              assertThat(c.getType()).isEqualTo("Discovering");
              assertThat(c.getMessage()).isEqualTo("zeroconf finds 3 devices");
            });
    assertThat(stored.getNodes().get("node-a").getDevices()).isEqualTo(3);
  }

  @Test
  void updateWithAStaleResourceVersionIsRejectedWithConflict() {
    configurations().resource(zeroconf()).create();
    Configuration first = configurations().withName("akri-zeroconf").get();
    Configuration second = configurations().withName("akri-zeroconf").get();

    first.getSpec().setCapacity(3);
    configurations().resource(first).update();
    second.getSpec().setCapacity(4);

    assertThatThrownBy(() -> configurations().resource(second).update())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    assertThat(configurations().withName("akri-zeroconf").get().getSpec().getCapacity())
        .isEqualTo(3);
  }

  @Test
  void instanceSlotClaimsUseOptimisticConcurrency() {
    instances().resource(debugEchoInstance()).create();
    Instance onNodeA = instances().withName("akri-debug-echo-foo-8120fe").get();
    Instance onNodeB = instances().withName("akri-debug-echo-foo-8120fe").get();

    onNodeA.getSpec().getDeviceUsage().put("akri-debug-echo-foo-8120fe-1", "node-a");
    instances().resource(onNodeA).update();
    onNodeB.getSpec().getDeviceUsage().put("akri-debug-echo-foo-8120fe-1", "node-b");

    assertThatThrownBy(() -> instances().resource(onNodeB).update())
        .isInstanceOfSatisfying(
            KubernetesClientException.class, e -> assertThat(e.getCode()).isEqualTo(409));
    Instance stored = instances().withName("akri-debug-echo-foo-8120fe").get();
    assertThat(stored.getSpec().getDeviceUsage())
        .containsExactly(
            Map.entry("akri-debug-echo-foo-8120fe-0", "node-a"),
            Map.entry("akri-debug-echo-foo-8120fe-1", "node-a"));
    assertThat(stored.getSpec().getNodes()).isEqualTo(List.of("node-a", "node-b"));
    assertThat(stored.getSpec().getShared()).isTrue();
  }

  @Test
  void mockServerDoesNotEnforceTheSchemaSoItCannotStandInForTheApiServersValidation() {
    Configuration invalid = zeroconf();
    invalid.getSpec().setCapacity(0); // a real API server rejects this (minimum: 1)

    configurations().resource(invalid).create();

    assertThat(configurations().withName("akri-zeroconf").get().getSpec().getCapacity()).isZero();
  }

  private NonNamespaceOperation<
          Configuration, KubernetesResourceList<Configuration>, Resource<Configuration>>
      configurations() {
    MixedOperation<Configuration, KubernetesResourceList<Configuration>, Resource<Configuration>>
        all = client.resources(Configuration.class);
    return all.inNamespace(NAMESPACE);
  }

  private NonNamespaceOperation<Instance, KubernetesResourceList<Instance>, Resource<Instance>>
      instances() {
    return client.resources(Instance.class).inNamespace(NAMESPACE);
  }

  private Configuration zeroconf() {
    Configuration configuration =
        serialization.unmarshal(
            AkriResourceRoundTripTest.resource("zeroconf-configuration.yaml"), Configuration.class);
    configuration.getMetadata().setNamespace(NAMESPACE);
    return configuration;
  }

  private Instance debugEchoInstance() {
    Instance instance =
        serialization.unmarshal(
            AkriResourceRoundTripTest.resource("debug-echo-instance.yaml"), Instance.class);
    instance.getMetadata().setNamespace(NAMESPACE);
    return instance;
  }
}
