package io.jakri.controller.reconcile;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.controller.objects.AllowedResource;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.objects.ObjectKinds;
import io.jakri.controller.objects.ServedResource;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceSpec;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class ExpectedBrokersTest {

  private static final ServedResource CONFIG_MAPS =
      new ServedResource("", "v1", "configmaps", "ConfigMap", true);

  private final KubernetesSerialization serialization = new KubernetesSerialization();
  private final ObjectKinds kinds =
      ObjectKinds.of(AllowedResource.parseList("configmaps"), List.of(CONFIG_MAPS), Map.of());
  private final ExpectedBrokers expected =
      new ExpectedBrokers(
          new BrokerTemplates(serialization), new InstanceObjects(serialization, () -> kinds));

  /** A cache of pods and config maps by name. */
  private final Map<String, HasMetadata> pods = new HashMap<>();

  private final Map<String, HasMetadata> objects = new HashMap<>();
  private final ExpectedBrokers.Observed cache =
      new ExpectedBrokers.Observed() {
        @Override
        public Optional<? extends HasMetadata> pod(String name) {
          return Optional.ofNullable(pods.get(name));
        }

        @Override
        public Optional<? extends HasMetadata> job(String name) {
          return Optional.empty();
        }

        @Override
        public Optional<? extends HasMetadata> object(ServedResource where, String name) {
          return Optional.ofNullable(objects.get(name));
        }
      };

  private Configuration configuration(String version, String image) {
    Configuration c =
        serialization.unmarshal(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata: {name: cam, namespace: devices, uid: c-1, generation: 1}
            spec:
              discoveryHandler: {name: simulated}
              brokerSpec:
                brokerPodSpec:
                  containers: [{name: broker, image: %s}]
              instanceObjects:
                - apiVersion: v1
                  kind: ConfigMap
                  data: {ip: "{{PROPERTY:IP}}"}
            """
                .formatted(image),
            Configuration.class);
    c.getMetadata().setResourceVersion(version);
    return c;
  }

  private Instance instance(String version) {
    Instance i = new Instance();
    i.getMetadata().setName("cam-0a1b2c");
    i.getMetadata().setNamespace("devices");
    i.getMetadata().setUid("i-1");
    i.getMetadata().setResourceVersion(version);
    i.setSpec(new InstanceSpec());
    i.getSpec().setConfigurationName("cam");
    i.getSpec().setNodes(List.of("node-a"));
    i.getSpec().setBrokerProperties(Map.of("IP", "10.0.0.7"));
    return i;
  }

  /** Puts into the cache exactly what the templates render now (names and template hashes). */
  private void createEverything(Configuration c, Instance i) {
    for (ExpectedBrokers.Expected e : expected.kept("cam", "cam-0a1b2c").orElseThrow()) {
      if (e instanceof ExpectedBrokers.Expected.PodNamed p) {
        pods.put(p.name(), withHash(p.name(), p.hash()));
      } else if (e instanceof ExpectedBrokers.Expected.ObjectNamed o) {
        objects.put(o.name(), withHash(o.name(), o.hash()));
      }
    }
  }

  private static HasMetadata withHash(String name, String hash) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .addToAnnotations(io.jakri.controller.broker.BrokerLabels.TEMPLATE_HASH, hash)
        .endMetadata()
        .build();
  }

  @Test
  void readyOnceThePodAndTheObjectExistWithTheRenderedHashes() {
    Configuration c = configuration("1", "broker:1");
    Instance i = instance("1");
    assertThat(expected.allExist(c, List.of(i), cache)).isFalse();
    assertThat(expected.kept("cam", "cam-0a1b2c").orElseThrow())
        .hasSize(2)
        .hasAtLeastOneElementOfType(ExpectedBrokers.Expected.PodNamed.class)
        .hasAtLeastOneElementOfType(ExpectedBrokers.Expected.ObjectNamed.class);
    createEverything(c, i);
    assertThat(expected.allExist(c, List.of(i), cache)).isTrue();
  }

  @Test
  void theTemplatesAreRenderedAgainOnlyWhenTheConfigurationOrTheInstanceChanged() {
    Instance i = instance("1");
    expected.allExist(configuration("1", "broker:1"), List.of(i), cache);
    List<ExpectedBrokers.Expected> first = expected.kept("cam", "cam-0a1b2c").orElseThrow();

    expected.allExist(configuration("1", "broker:1"), List.of(instance("1")), cache);
    assertThat(expected.kept("cam", "cam-0a1b2c").orElseThrow()).isSameAs(first);

    expected.allExist(configuration("1", "broker:1"), List.of(instance("2")), cache);
    List<ExpectedBrokers.Expected> second = expected.kept("cam", "cam-0a1b2c").orElseThrow();
    assertThat(second).isNotSameAs(first).isEqualTo(first);
  }

  @Test
  void aChangedBrokerImageMakesTheExistingPodStaleUntilReplaced() {
    Instance i = instance("1");
    Configuration before = configuration("1", "broker:1");
    expected.allExist(before, List.of(i), cache);
    createEverything(before, i);
    assertThat(expected.allExist(before, List.of(i), cache)).isTrue();

    Configuration after = configuration("2", "broker:2");
    assertThat(expected.allExist(after, List.of(i), cache)).isFalse();
    createEverything(after, i);
    assertThat(expected.allExist(after, List.of(i), cache)).isTrue();
  }

  @Test
  void anInstanceThatLeftIsForgottenAndSoIsAConfigurationThatIsGone() {
    Configuration c = configuration("1", "broker:1");
    expected.allExist(c, List.of(instance("1")), cache);
    assertThat(expected.kept("cam", "cam-0a1b2c")).isPresent();
    assertThat(expected.allExist(c, List.of(), cache)).isTrue();
    assertThat(expected.kept("cam", "cam-0a1b2c")).isEmpty();

    expected.allExist(c, List.of(instance("1")), cache);
    expected.forget("cam");
    assertThat(expected.kept("cam", "cam-0a1b2c")).isEmpty();
  }
}
