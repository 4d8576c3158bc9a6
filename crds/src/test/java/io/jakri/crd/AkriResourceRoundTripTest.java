package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.fabric8.kubernetes.api.model.Container;
import io.fabric8.kubernetes.api.model.IntOrString;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.client.CustomResource;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Akri-style YAML goes through the Java model and back without losing a field, including the
 * embedded PodSpec/JobSpec/ServiceSpec that the CRD schema keeps opaque.
 */
class AkriResourceRoundTripTest {

  private final KubernetesSerialization serialization = new KubernetesSerialization();

  @ParameterizedTest
  @CsvSource({
    "zeroconf-configuration.yaml, io.jakri.crd.Configuration",
    "debug-echo-configuration.yaml, io.jakri.crd.Configuration",
    "debug-echo-instance.yaml, io.jakri.crd.Instance"
  })
  void akriYamlSurvivesARoundTripThroughTheModel(String file, String className)
      throws ReflectiveOperationException, IOException {
    Class<?> type = Class.forName(className);
    String yaml = resource(file);

    Object typed = serialization.unmarshal(yaml, type);
    JsonNode original = CrdFiles.parse(yaml);
    JsonNode back = new ObjectMapper().readTree(serialization.asJson(typed));

    assertThat(typed).isInstanceOf(CustomResource.class);
    assertThat(CrdFiles.firstDifference(original, back)).isEmpty();
  }

  @Test
  void zeroconfConfigurationReadsIntoTypedFields() {
    Configuration configuration =
        serialization.unmarshal(resource("zeroconf-configuration.yaml"), Configuration.class);
    ConfigurationSpec spec = configuration.getSpec();

    assertThat(configuration.getMetadata().getName()).isEqualTo("akri-zeroconf");
    assertThat(spec.getCapacity()).isEqualTo(2);
    assertThat(spec.getDiscoveryHandler().getName()).isEqualTo("zeroconf");
    assertThat(spec.getDiscoveryHandler().getDiscoveryDetails())
        .startsWith("kind: \"_rtsp._tcp\"\n");
    List<DiscoveryProperty> properties = spec.getDiscoveryHandler().getDiscoveryProperties();
    assertThat(properties)
        .extracting(DiscoveryProperty::getName)
        .containsExactly("PROTOCOL", "_CAMERA_PASSWORD", "Site1");
    assertThat(properties.get(0).getValue()).isEqualTo("rtsp");
    assertThat(properties.get(1).getValueFrom().getSecretKeyRef().getKey()).isEqualTo("password");
    assertThat(properties.get(2).getValueFrom().getConfigMapKeyRef().getOptional()).isTrue();

    Container broker = spec.getBrokerSpec().getBrokerPodSpec().getContainers().get(0);
    assertThat(broker.getResources().getLimits())
        .containsEntry("{{PLACEHOLDER}}", new Quantity("1"));
    assertThat(spec.getBrokerSpec().getBrokerJobSpec()).isNull();
    assertThat(spec.getInstanceServiceSpec().getPorts().get(0).getTargetPort())
        .isEqualTo(new IntOrString(8083));
    assertThat(spec.getConfigurationServiceSpec().getPorts().get(0).getTargetPort())
        .isEqualTo(new IntOrString("grpc"));
    assertThat(spec.getBrokerProperties())
        .containsExactly(
            Map.entry("RESOLUTION_WIDTH", "800"), Map.entry("RESOLUTION_HEIGHT", "600"));
  }

  @Test
  void instanceReadsSlotsNodesAndSharing() {
    Instance instance =
        serialization.unmarshal(resource("debug-echo-instance.yaml"), Instance.class);
    InstanceSpec spec = instance.getSpec();

    assertThat(spec.getConfigurationName()).isEqualTo("akri-debug-echo-foo");
    assertThat(spec.getShared()).isTrue();
    assertThat(spec.getNodes()).containsExactly("node-a", "node-b");
    assertThat(spec.getDeviceUsage())
        .containsExactly(
            Map.entry("akri-debug-echo-foo-8120fe-0", "node-a"),
            Map.entry("akri-debug-echo-foo-8120fe-1", ""));
    assertThat(instance.getStatus()).isNull();
  }

  @Test
  void omittedOptionalFieldsReadAsTheSchemaDefaults() {
    Configuration configuration =
        serialization.unmarshal(
            """
            apiVersion: akri.sh/v0
            kind: Configuration
            metadata:
              name: minimal
            spec:
              discoveryHandler:
                name: debugEcho
            """,
            Configuration.class);

    assertThat(configuration.getSpec().getCapacity()).isEqualTo(1);
    assertThat(configuration.getSpec().getDiscoveryHandler().getDiscoveryDetails()).isEmpty();
    assertThat(configuration.getSpec().getDiscoveryHandler().getDiscoveryProperties()).isEmpty();
    assertThat(configuration.getSpec().getBrokerSpec()).isNull();
    assertThat(configuration.getSpec().getBrokerProperties()).isEmpty();
  }

  static String resource(String name) {
    try (InputStream in = AkriResourceRoundTripTest.class.getResourceAsStream(name)) {
      assertThat(in).as("test resource %s", name).isNotNull();
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }
}
