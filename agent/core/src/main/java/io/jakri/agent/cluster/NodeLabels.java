package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.logging.ApiFailure;
import java.time.Duration;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Labels this agent's Node by what it has ({@code --label-node}): {@code
 * akri.sh/<configuration>=<number of Instances on this node>}, so workloads can target such nodes
 * with a node selector without holding a device. Level-triggered: every Instance change schedules
 * one reconcile (coalesced) that computes the wanted labels from the store's current Instances and
 * patches only the difference; a periodic one repairs hand edits. The keys it set are recorded in
 * the Node's annotation {@value #OWNED}, so after a restart it removes what it set and no longer
 * wants, and it never touches a label it did not set (another agent's, a user's {@code akri.sh/}
 * label). Two Configurations of the same name in two namespaces share one label (their sum).
 */
public final class NodeLabels implements InstanceStore.Listener, AutoCloseable {

  /** The annotation listing the label keys this agent set, comma-separated. */
  public static final String OWNED = "jakri.akri.sh/node-labels";

  /** The prefix of the labels: {@code akri.sh/<configuration>}. */
  public static final String PREFIX = "akri.sh/";

  private static final Logger LOG = LoggerFactory.getLogger(NodeLabels.class);

  private final KubernetesClient client;
  private final String nodeName;
  private final Supplier<List<Instance>> instances;
  private final java.util.function.BooleanSupplier listed;
  private final ScheduledExecutorService scheduler;
  private final Duration coalesce;
  private final Duration repair;
  private ScheduledFuture<?> pending;
  private ScheduledFuture<?> periodic;
  private boolean closed;
  private String lastFailure = "";

  /**
   * @param instances the store's current Instances (any node)
   * @param listed whether the store has listed the API server's Instances: before that an empty
   *     store would remove every label (a restarted agent must not flap them)
   * @param coalesce how long changes are gathered before one reconcile
   * @param repair how often the labels are checked again without a change
   */
  public NodeLabels(
      KubernetesClient client,
      String nodeName,
      Supplier<List<Instance>> instances,
      java.util.function.BooleanSupplier listed,
      ScheduledExecutorService scheduler,
      Duration coalesce,
      Duration repair) {
    this.client = client;
    this.nodeName = nodeName;
    this.instances = instances;
    this.listed = listed;
    this.scheduler = scheduler;
    this.coalesce = coalesce;
    this.repair = repair;
  }

  /** Reconciles now, then every {@code repair} and after changes. */
  public synchronized void start() {
    periodic =
        scheduler.scheduleWithFixedDelay(
            this::reconcile, 0, repair.toMillis(), TimeUnit.MILLISECONDS);
  }

  @Override
  public void changed(Instance instance) {
    soon();
  }

  @Override
  public void deleted(String name) {
    soon();
  }

  private synchronized void soon() {
    if (closed || pending != null && !pending.isDone()) {
      return;
    }
    pending = scheduler.schedule(this::reconcile, coalesce.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** The labels wanted now: each Configuration with Instances on this node, and their number. */
  static Map<String, String> wanted(List<Instance> all, String nodeName) {
    Map<String, Long> counts =
        all.stream()
            .filter(i -> i.nodes().contains(nodeName))
            .collect(
                Collectors.groupingBy(
                    i -> PREFIX + i.configurationName(), TreeMap::new, Collectors.counting()));
    Map<String, String> labels = new TreeMap<>();
    counts.forEach((k, v) -> labels.put(k, String.valueOf(v)));
    return labels;
  }

  /** The JSON merge patch from {@code node}'s labels to {@code want}; empty when none is needed. */
  static Map<String, Object> patch(Node node, Map<String, String> want) {
    Map<String, String> labels =
        node.getMetadata().getLabels() == null ? Map.of() : node.getMetadata().getLabels();
    Map<String, String> annotations =
        node.getMetadata().getAnnotations() == null
            ? Map.of()
            : node.getMetadata().getAnnotations();
    Set<String> owned = new TreeSet<>();
    String recorded = annotations.getOrDefault(OWNED, "");
    if (!recorded.isBlank()) {
      Arrays.stream(recorded.split(",")).map(String::strip).forEach(owned::add);
    }
    Map<String, Object> labelPatch = new LinkedHashMap<>();
    want.forEach(
        (k, v) -> {
          if (!v.equals(labels.get(k))) {
            labelPatch.put(k, v);
          }
        });
    for (String key : owned) {
      if (!want.containsKey(key) && labels.containsKey(key)) {
        labelPatch.put(key, null); // merge patch: null removes
      }
    }
    String ownedNow = String.join(",", new TreeSet<>(want.keySet()));
    Map<String, Object> metadata = new LinkedHashMap<>();
    if (!labelPatch.isEmpty()) {
      metadata.put("labels", labelPatch);
    }
    if (!ownedNow.equals(recorded)) {
      Map<String, Object> annotationPatch = new LinkedHashMap<>();
      annotationPatch.put(OWNED, ownedNow.isEmpty() ? null : ownedNow);
      metadata.put("annotations", annotationPatch);
    }
    return metadata.isEmpty() ? Map.of() : Map.of("metadata", metadata);
  }

  private void reconcile() {
    synchronized (this) {
      if (closed) {
        return;
      }
    }
    if (!listed.getAsBoolean()) {
      soon(); // again shortly: the Instances are not known yet
      return;
    }
    try {
      Map<String, String> want = wanted(instances.get(), nodeName);
      Node node = client.nodes().withName(nodeName).get();
      if (node == null) {
        failed("Node " + nodeName + " does not exist; its labels are set once it does");
        return;
      }
      Map<String, Object> patch = patch(node, want);
      if (!patch.isEmpty()) {
        client
            .nodes()
            .withName(nodeName)
            .patch(
                PatchContext.of(PatchType.JSON_MERGE),
                io.fabric8.kubernetes.client.utils.Serialization.asJson(patch));
        LOG.info("labelled Node {}: {}", nodeName, want.isEmpty() ? "no akri.sh/ labels" : want);
      }
      lastFailure = "";
    } catch (RuntimeException e) {
      failed(
          "cannot label Node "
              + nodeName
              + ": "
              + ApiFailure.describe(String.valueOf(client.getMasterUrl()), e));
    }
  }

  private synchronized void failed(String why) {
    if (!why.equals(lastFailure)) {
      LOG.warn("{}; retrying every {}s and on the next change", why, repair.toSeconds());
      lastFailure = why;
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (pending != null) {
      pending.cancel(false);
    }
    if (periodic != null) {
      periodic.cancel(false);
    }
  }
}
