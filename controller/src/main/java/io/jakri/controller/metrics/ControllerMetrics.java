package io.jakri.controller.metrics;

import io.fabric8.kubernetes.api.model.OwnerReference;
import io.fabric8.kubernetes.api.model.Pod;
import io.jakri.controller.broker.BrokerLabels;
import io.micrometer.core.instrument.MultiGauge;
import io.micrometer.core.instrument.Tags;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.function.Supplier;

/**
 * The controller's Prometheus metrics (one registry per controller, no static state). Today one
 * metric, Akri's {@code akri_broker_pod_count{configuration, node}}: the broker Pods the controller
 * made for Instances (not the Pods of broker Jobs), by Configuration and target node, read from the
 * controller's cache when scraped, so nothing is counted between scrapes. Thread-safe.
 */
public final class ControllerMetrics {

  private final PrometheusMeterRegistry registry =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final Supplier<List<Pod>> brokerPods;
  private final MultiGauge brokerPodCount;

  /**
   * @param brokerPods the Pods the controller manages now (its cache)
   */
  public ControllerMetrics(Supplier<List<Pod>> brokerPods) {
    this.brokerPods = brokerPods;
    brokerPodCount =
        MultiGauge.builder("akri.broker.pod.count")
            .description("Akri Broker Pod Count: broker Pods by Configuration and node")
            .register(registry);
  }

  /** The Prometheus text exposition, with the gauges refreshed first. */
  public synchronized String scrape() {
    Map<Series, Integer> counts =
        new TreeMap<>(Comparator.comparing(Series::configuration).thenComparing(Series::node));
    for (Pod pod : brokerPods.get()) {
      if (!ownedByInstance(pod)) {
        continue;
      }
      Map<String, String> labels =
          Optional.ofNullable(pod.getMetadata().getLabels()).orElse(Map.of());
      Map<String, String> annotations =
          Optional.ofNullable(pod.getMetadata().getAnnotations()).orElse(Map.of());
      String configuration = labels.getOrDefault(BrokerLabels.CONFIGURATION, "");
      String node =
          annotations.getOrDefault(
              BrokerLabels.TARGET_NODE_ANNOTATION,
              labels.getOrDefault(BrokerLabels.TARGET_NODE, ""));
      counts.merge(new Series(configuration, node), 1, Integer::sum);
    }
    List<MultiGauge.Row<?>> rows = new ArrayList<>();
    counts.forEach(
        (k, n) ->
            rows.add(
                MultiGauge.Row.of(
                    Tags.of("configuration", k.configuration(), "node", k.node()), n)));
    brokerPodCount.register(rows, true);
    return registry.scrape();
  }

  /** One series of {@code akri_broker_pod_count}. */
  private record Series(String configuration, String node) {}

  private static boolean ownedByInstance(Pod pod) {
    List<OwnerReference> owners =
        Optional.ofNullable(pod.getMetadata().getOwnerReferences()).orElse(List.of());
    return owners.stream().anyMatch(o -> "Instance".equals(o.getKind()));
  }
}
