package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.Configuration;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes each Configuration's {@code status}: this node's own entry under {@code status.nodes}
 * (state, message, devices), conditions aggregated over all nodes' entries ({@code Discovering},
 * {@code Invalid}, {@code HandlerMissing}, {@code Failed}) and the number of Instances.
 *
 * <p>Agents never overwrite each other's node entries (a JSON merge patch touches only this node's
 * key); the aggregated conditions are a pure function of all entries, with node names sorted and
 * transition times kept while a condition's status holds, so agents that see the same entries write
 * the same conditions and converge instead of fighting. Writes happen only when something differs
 * from the last seen object (and differs from what this agent last sent on that same object), and
 * at most once per interval (1 s by default) however fast changes arrive; each write is one patch,
 * with no read before it. A write that would only correct the Instance count waits 1–3 intervals (a
 * delay fixed per node name) for another agent's correction to arrive first, so a burst of new
 * Instances costs a few status writes in all rather than a few per agent. Failures are logged and
 * retried on the next change or after a backoff. Also reports each new problem of this node through
 * {@link Warnings}. Thread-safe; work is coalesced onto the scheduler.
 */
public final class ConfigurationStatusPublisher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationStatusPublisher.class);

  /** Condition types, in the order written. */
  public static final List<String> CONDITIONS =
      List.of("Discovering", "Invalid", "HandlerMissing", "Failed");

  /** Receives this node's problems with a Configuration (for Kubernetes Events). */
  @FunctionalInterface
  public interface Warnings {
    void warn(ConfigurationWatcher.Known configuration, String reason, String message);
  }

  private final KubernetesClient client;
  private final String namespace;
  private final String node;
  private final ConfigurationWatcher watcher;
  private final Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery;
  private final InstanceStore instances;
  private final Warnings warnings;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ApiCalls calls;
  private final Duration interval;
  private final AtomicBoolean pending = new AtomicBoolean();
  private final Map<String, String> reported = new HashMap<>();
  private final Map<String, Written> written = new HashMap<>();
  private final Map<String, Stale> staleCounts = new HashMap<>();
  private final long countDelayMs;
  private volatile long lastPass = Long.MIN_VALUE / 2;
  private volatile boolean closed;

  /** The default least time between two publish passes. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);

  /** Delay of the first pass after a quiet period. */
  private static final long QUICK_MS = 50;

  /** Since when (clock millis) the status at a resourceVersion has shown a wrong Instance count. */
  private record Stale(String resourceVersion, long since) {}

  /** The last patch sent for a Configuration and the resourceVersion of the status it was on. */
  private record Written(String resourceVersion, String patch) {}

  public ConfigurationStatusPublisher(
      KubernetesClient client,
      String namespace,
      String node,
      ConfigurationWatcher watcher,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery,
      InstanceStore instances,
      Warnings warnings,
      ScheduledExecutorService scheduler,
      Clock clock,
      ApiCalls calls) {
    this(
        client,
        namespace,
        node,
        watcher,
        discovery,
        instances,
        warnings,
        scheduler,
        clock,
        calls,
        DEFAULT_INTERVAL);
  }

  /**
   * @param interval the least time between two publish passes: changes arriving in a burst (100
   *     Instances appearing, each changing the count) are coalesced into one pass per interval
   */
  public ConfigurationStatusPublisher(
      KubernetesClient client,
      String namespace,
      String node,
      ConfigurationWatcher watcher,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery,
      InstanceStore instances,
      Warnings warnings,
      ScheduledExecutorService scheduler,
      Clock clock,
      ApiCalls calls,
      Duration interval) {
    this.interval = interval;
    // Each node waits a different time (from its name) before correcting only the count, so in a
    // burst the first correction reaches the others through the watch before they send theirs.
    this.countDelayMs =
        interval.toMillis() + Math.floorMod(node.hashCode(), 2 * Math.max(1, interval.toMillis()));
    this.client = client;
    this.namespace = namespace;
    this.node = node;
    this.watcher = watcher;
    this.discovery = discovery;
    this.instances = instances;
    this.warnings = warnings;
    this.scheduler = scheduler;
    this.clock = clock;
    this.calls = calls;
  }

  /**
   * Asks for a publish pass: after 50 ms when the last pass is at least the interval ago, else when
   * the interval since the last pass is over. Cheap, callable from any thread; calls before the
   * pass runs are coalesced into it.
   */
  public void changed() {
    if (!closed && pending.compareAndSet(false, true)) {
      long wait = Math.max(QUICK_MS, lastPass + interval.toMillis() - clock.millis());
      scheduler.schedule(this::publish, wait, TimeUnit.MILLISECONDS);
    }
  }

  @Override
  public void close() {
    closed = true;
  }

  /** This node's entry for one Configuration; empty while discovery has nothing to say yet. */
  record NodeEntry(String state, String message, int devices) {}

  private synchronized void publish() {
    lastPass = clock.millis();
    pending.set(false);
    if (closed) {
      return;
    }
    Map<String, DiscoveryManager.ConfigurationStatus> statuses = discovery.get();
    Map<String, Integer> counts = new HashMap<>();
    try {
      for (Instance i : instances.list()) {
        counts.merge(i.configurationName(), 1, Integer::sum);
      }
    } catch (StoreException e) {
      LOG.debug("instance count unavailable: {}", e.getMessage());
    }
    boolean failed = false;
    for (ConfigurationWatcher.Known k : watcher.known().values()) {
      Optional<NodeEntry> own = ownEntry(k, statuses.get(k.name()));
      if (own.isEmpty()) {
        continue;
      }
      report(k, own.get());
      try {
        publishOne(k, own.get(), counts.getOrDefault(k.name(), 0));
      } catch (KubernetesClientException e) {
        failed = true;
        LOG.warn(
            "configuration {}/{}: cannot write status: {}",
            k.namespace(),
            k.name(),
            KubernetesInstanceStore.describe(e));
      }
    }
    reported.keySet().retainAll(watcher.known().keySet());
    written.keySet().retainAll(watcher.known().keySet());
    staleCounts.keySet().retainAll(watcher.known().keySet());
    if (failed && !closed) {
      scheduler.schedule(this::changed, 2, TimeUnit.SECONDS);
    }
  }

  private Optional<NodeEntry> ownEntry(
      ConfigurationWatcher.Known k, DiscoveryManager.ConfigurationStatus status) {
    if (!k.problems().isEmpty()) {
      return Optional.of(new NodeEntry("Invalid", String.join("; ", k.problems()), 0));
    }
    if (status == null) {
      return Optional.empty();
    }
    String state =
        switch (status.state()) {
          case DISCOVERING -> "Discovering";
          case HANDLER_MISSING -> "HandlerMissing";
          case INVALID -> "Invalid";
          case FAILED -> "Failed";
        };
    return Optional.of(new NodeEntry(state, status.message(), status.devices()));
  }

  private void report(ConfigurationWatcher.Known k, NodeEntry own) {
    String key = own.state() + "\n" + own.message();
    if (key.equals(reported.put(k.name(), key)) || own.state().equals("Discovering")) {
      return;
    }
    String reason =
        switch (own.state()) {
          case "Invalid" -> "InvalidConfiguration";
          case "HandlerMissing" -> "HandlerMissing";
          default -> "DiscoveryFailed";
        };
    warnings.warn(k, reason, "node " + node + ": " + own.message());
  }

  @SuppressWarnings("unchecked")
  private void publishOne(ConfigurationWatcher.Known k, NodeEntry own, int instanceCount) {
    Map<String, Object> status = new LinkedHashMap<>();
    Object raw = k.resource().getAdditionalProperties().get("status");
    if (raw instanceof Map<?, ?> m) {
      status.putAll((Map<String, Object>) m);
    }
    Map<String, Object> nodes = new TreeMap<>();
    if (status.get("nodes") instanceof Map<?, ?> n) {
      ((Map<String, Object>) n).forEach(nodes::put);
    }
    Map<String, Object> previousOwn =
        nodes.get(node) instanceof Map<?, ?> p ? (Map<String, Object>) p : Map.of();
    boolean ownSame =
        Objects.equals(previousOwn.get("state"), own.state())
            && Objects.equals(previousOwn.get("message"), own.message())
            && Objects.equals(number(previousOwn.get("devices")), (long) own.devices())
            && Objects.equals(number(previousOwn.get("observedGeneration")), k.generation());
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<String, Object> ownEntry = new LinkedHashMap<>();
    ownEntry.put("state", own.state());
    ownEntry.put("message", own.message());
    ownEntry.put("devices", own.devices());
    ownEntry.put("observedGeneration", k.generation());
    ownEntry.put(
        "lastTransitionTime",
        ownSame || Objects.equals(previousOwn.get("state"), own.state())
            ? previousOwn.getOrDefault("lastTransitionTime", now)
            : now);
    nodes.put(node, ownEntry);

    // Only the agents' own condition types are computed here; others (the controller's
    // BrokersReady) are carried over untouched and never cause a write.
    List<Map<String, Object>> previousConditions = new ArrayList<>();
    List<Object> foreignConditions = new ArrayList<>();
    if (status.get("conditions") instanceof List<?> l) {
      for (Object o : l) {
        if (o instanceof Map<?, ?> c) {
          if (CONDITIONS.contains(String.valueOf(c.get("type")))) {
            previousConditions.add((Map<String, Object>) c);
          } else {
            foreignConditions.add(c);
          }
        }
      }
    }
    List<Condition> ownConditions = conditions(nodes, previousConditions, k.generation(), now);
    boolean conditionsSame = sameConditions(previousConditions, ownConditions);
    List<Object> conditions = new ArrayList<>(ownConditions);
    conditions.addAll(foreignConditions);
    boolean countSame = Objects.equals(number(status.get("instances")), (long) instanceCount);
    String seenVersion = k.resource().getMetadata().getResourceVersion();
    if (ownSame && conditionsSame && countSame) {
      staleCounts.remove(k.name());
      return;
    }
    if (ownSame && conditionsSame && countDeferred(k.name(), seenVersion)) {
      return;
    }
    staleCounts.remove(k.name());
    // A JSON patch, not a merge patch: "add" replaces exactly the members named and leaves the
    // other nodes' entries alone on every server (the mock server's merge patch concatenates
    // lists, which made conditions grow on each write).
    List<Map<String, Object>> ops = new ArrayList<>();
    if (raw == null) {
      Map<String, Object> full = new LinkedHashMap<>();
      full.put("nodes", Map.of(node, ownEntry));
      full.put("conditions", conditions);
      full.put("instances", instanceCount);
      full.put("observedGeneration", k.generation());
      ops.add(op("/status", full));
    } else {
      if (status.get("nodes") instanceof Map<?, ?>) {
        ops.add(op("/status/nodes/" + JsonPointer.escape(node), ownEntry));
      } else {
        ops.add(op("/status/nodes", Map.of(node, ownEntry)));
      }
      ops.add(op("/status/conditions", conditions));
      ops.add(op("/status/instances", instanceCount));
      ops.add(op("/status/observedGeneration", k.generation()));
    }
    String json = client.getKubernetesSerialization().asJson(ops);
    // The same patch on the same status we already patched: our write has not come back through
    // the watch yet, and sending it again would change nothing.
    Written last = written.get(k.name());
    if (last != null
        && Objects.equals(last.resourceVersion(), seenVersion)
        && last.patch().equals(json)) {
      return;
    }
    // The target names the Configuration, so the client sends the patch without reading it first.
    GenericKubernetesResource target = new GenericKubernetesResource();
    target.setApiVersion(Configuration.GROUP + "/" + Configuration.VERSION);
    target.setKind("Configuration");
    target.setMetadata(
        new ObjectMetaBuilder().withName(k.name()).withNamespace(k.namespace()).build());
    calls.count(ApiCalls.Verb.PATCH);
    client
        .genericKubernetesResources(Configuration.resourceDefinition())
        .inNamespace(k.namespace())
        .resource(target)
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON), json);
    written.put(k.name(), new Written(seenVersion, json));
    LOG.debug("configuration {}/{}: status written ({})", k.namespace(), k.name(), own.state());
  }

  /**
   * Whether to hold back a write whose only change is the Instance count: every agent sees the same
   * Instances, so one agent's correction serves all. A status version showing a wrong count is
   * corrected only after it has stood for this node's count delay; a pass is scheduled for then.
   */
  private boolean countDeferred(String configuration, String seenVersion) {
    long now = clock.millis();
    Stale stale = staleCounts.get(configuration);
    if (stale == null || !Objects.equals(stale.resourceVersion(), seenVersion)) {
      stale = new Stale(seenVersion, now);
      staleCounts.put(configuration, stale);
    }
    long wait = stale.since() + countDelayMs - now;
    if (wait <= 0) {
      return false;
    }
    if (!closed) {
      scheduler.schedule(this::changed, wait, TimeUnit.MILLISECONDS);
    }
    return true;
  }

  private static Map<String, Object> op(String path, Object value) {
    Map<String, Object> op = new LinkedHashMap<>();
    op.put("op", "add");
    op.put("path", path);
    op.put("value", value);
    return op;
  }

  /** Conditions as a pure function of all nodes' entries (sorted by node name). */
  @SuppressWarnings("unchecked")
  static List<Condition> conditions(
      Map<String, Object> nodes, List<Map<String, Object>> previous, long generation, String now) {
    Map<String, List<String>> byState = new LinkedHashMap<>();
    Map<String, String> firstMessage = new HashMap<>();
    new TreeMap<>(nodes)
        .forEach(
            (n, entry) -> {
              if (entry instanceof Map<?, ?> e) {
                String state = String.valueOf(((Map<String, Object>) e).get("state"));
                byState.computeIfAbsent(state, s -> new ArrayList<>()).add(n);
                firstMessage.putIfAbsent(
                    state, String.valueOf(((Map<String, Object>) e).get("message")));
              }
            });
    List<Condition> result = new ArrayList<>();
    for (String type : CONDITIONS) {
      List<String> on = byState.getOrDefault(type, List.of());
      boolean isTrue = !on.isEmpty();
      String status = isTrue ? "True" : "False";
      String message =
          isTrue
              ? (type.equals("Discovering")
                  ? "discovering on " + on.size() + " node(s): " + String.join(", ", on)
                  : "on node(s) " + String.join(", ", on) + ": " + firstMessage.get(type))
              : "";
      String transition = now;
      for (Map<String, Object> p : previous) {
        if (type.equals(p.get("type")) && status.equals(p.get("status"))) {
          transition = String.valueOf(p.getOrDefault("lastTransitionTime", now));
        }
      }
      result.add(
          new ConditionBuilder()
              .withType(type)
              .withStatus(status)
              .withReason(isTrue ? type : "Not" + type)
              .withMessage(message)
              .withObservedGeneration(generation)
              .withLastTransitionTime(transition)
              .build());
    }
    return result;
  }

  private static boolean sameConditions(List<Map<String, Object>> previous, List<Condition> next) {
    if (previous.size() != next.size()) {
      return false;
    }
    for (int i = 0; i < next.size(); i++) {
      Map<String, Object> p = previous.get(i);
      Condition c = next.get(i);
      if (!Objects.equals(p.get("type"), c.getType())
          || !Objects.equals(p.get("status"), c.getStatus())
          || !Objects.equals(p.get("reason"), c.getReason())
          || !Objects.equals(p.get("message"), c.getMessage())
          || !Objects.equals(number(p.get("observedGeneration")), c.getObservedGeneration())) {
        return false;
      }
    }
    return true;
  }

  private static Long number(Object o) {
    return o instanceof Number n ? n.longValue() : null;
  }
}
