package io.jakri.controller.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.PodBuilder;
import io.jakri.controller.broker.BrokerLabels;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class ControllerMetricsTest {

  static Pod pod(String name, String ownerKind, String configuration, String node) {
    return new PodBuilder()
        .withNewMetadata()
        .withName(name)
        .withLabels(
            Map.of(
                BrokerLabels.CONFIGURATION,
                configuration,
                BrokerLabels.TARGET_NODE,
                node.length() > 63 ? "shortened" : node))
        .withAnnotations(Map.of(BrokerLabels.TARGET_NODE_ANNOTATION, node))
        .addNewOwnerReference()
        .withKind(ownerKind)
        .withName("owner")
        .endOwnerReference()
        .endMetadata()
        .build();
  }

  @Test
  void countsInstanceBrokerPodsByConfigurationAndFullNodeNameAndDropsGoneSeries() {
    String longNode = "n".repeat(70);
    List<Pod> pods =
        new ArrayList<>(
            List.of(
                pod("a", "Instance", "cam", "n1"),
                pod("b", "Instance", "cam", "n1"),
                pod("c", "Instance", "cam", longNode),
                pod("d", "Instance", "mic", "n1"),
                pod("e", "Job", "scan", "n1")));
    ControllerMetrics metrics = new ControllerMetrics(() -> List.copyOf(pods));

    String text = metrics.scrape();
    assertThat(text)
        .contains("akri_broker_pod_count{configuration=\"cam\",node=\"n1\"} 2.0")
        .contains("akri_broker_pod_count{configuration=\"cam\",node=\"" + longNode + "\"} 1.0")
        .contains("akri_broker_pod_count{configuration=\"mic\",node=\"n1\"} 1.0")
        .doesNotContain("configuration=\"scan\""); // Pods of broker Jobs are not broker Pods

    pods.removeIf(p -> p.getMetadata().getName().equals("d"));
    assertThat(metrics.scrape()).doesNotContain("configuration=\"mic\"");
  }
}
