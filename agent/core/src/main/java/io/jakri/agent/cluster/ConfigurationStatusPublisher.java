package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.crd.Configuration;
import java.time.Clock;
import java.time.Duration;
import java.time.temporal.ChronoUnit;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes this node's own entry of each Configuration's status, {@code status.nodes.<node>} (state,
 * message, devices, observedGeneration, lastTransitionTime), and nothing else: the conditions, the
 * Instance count and {@code status.observedGeneration} are the controller's, derived from all
 * nodes' entries ({@link io.jakri.crd.ConfigurationConditions}). One owner per field, so agents and
 * the controller never rewrite each other's writes.
 *
 * <p>Each write is a JSON merge patch naming only this node's key, with no read before it, sent
 * only when the entry differs from the last seen object (and from what this agent last sent on that
 * same object), at most once per interval (1 s by default) however fast changes arrive. Failures
 * are logged and retried on the next change or after a backoff. Also reports each new problem of
 * this node through {@link Warnings}. Thread-safe; work is coalesced onto the scheduler.
 */
public final class ConfigurationStatusPublisher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationStatusPublisher.class);

  /** Receives this node's problems with a Configuration (for Kubernetes Events). */
  @FunctionalInterface
  public interface Warnings {
    void warn(ConfigurationWatcher.Known configuration, String reason, String message);
  }

  private final KubernetesClient client;
  private final String node;
  private final ConfigurationWatcher watcher;
  private final Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery;
  private final Warnings warnings;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ApiCalls calls;
  private final Duration interval;
  private final AtomicBoolean pending = new AtomicBoolean();
  private final Map<String, String> reported = new HashMap<>();
  private final Map<String, Written> written = new HashMap<>();
  private volatile long lastPass = Long.MIN_VALUE / 2;
  private volatile boolean closed;

  /** The default least time between two publish passes. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);

  /** Delay of the first pass after a quiet period. */
  private static final long QUICK_MS = 50;

  /** The last patch sent for a Configuration and the resourceVersion of the status it was on. */
  private record Written(String resourceVersion, String patch) {}

  public ConfigurationStatusPublisher(
      KubernetesClient client,
      String node,
      ConfigurationWatcher watcher,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery,
      Warnings warnings,
      ScheduledExecutorService scheduler,
      Clock clock,
      ApiCalls calls) {
    this(client, node, watcher, discovery, warnings, scheduler, clock, calls, DEFAULT_INTERVAL);
  }

  /**
   * @param interval the least time between two publish passes: changes arriving in a burst are
   *     coalesced into one pass per interval
   */
  public ConfigurationStatusPublisher(
      KubernetesClient client,
      String node,
      ConfigurationWatcher watcher,
      Supplier<Map<String, DiscoveryManager.ConfigurationStatus>> discovery,
      Warnings warnings,
      ScheduledExecutorService scheduler,
      Clock clock,
      ApiCalls calls,
      Duration interval) {
    this.interval = interval;
    this.client = client;
    this.node = node;
    this.watcher = watcher;
    this.discovery = discovery;
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
    boolean failed = false;
    for (ConfigurationWatcher.Known k : watcher.known().values()) {
      Optional<NodeEntry> own = ownEntry(k, statuses.get(k.name()));
      if (own.isEmpty()) {
        continue;
      }
      report(k, own.get());
      try {
        publishOne(k, own.get());
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
  private void publishOne(ConfigurationWatcher.Known k, NodeEntry own) {
    Map<String, Object> previousOwn = Map.of();
    if (k.resource().getAdditionalProperties().get("status") instanceof Map<?, ?> status
        && status.get("nodes") instanceof Map<?, ?> nodes
        && nodes.get(node) instanceof Map<?, ?> p) {
      previousOwn = (Map<String, Object>) p;
    }
    boolean ownSame =
        Objects.equals(previousOwn.get("state"), own.state())
            && Objects.equals(previousOwn.get("message"), own.message())
            && Objects.equals(number(previousOwn.get("devices")), (long) own.devices())
            && Objects.equals(number(previousOwn.get("observedGeneration")), k.generation());
    if (ownSame) {
      return;
    }
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    Map<String, Object> ownEntry = new LinkedHashMap<>();
    ownEntry.put("state", own.state());
    ownEntry.put("message", own.message());
    ownEntry.put("devices", own.devices());
    ownEntry.put("observedGeneration", k.generation());
    ownEntry.put(
        "lastTransitionTime",
        Objects.equals(previousOwn.get("state"), own.state())
            ? previousOwn.getOrDefault("lastTransitionTime", now)
            : now);
    // A merge patch naming only this node's key: the other nodes' entries and the controller's
    // fields are left as they are on every server, and a missing status is created.
    String json =
        client
            .getKubernetesSerialization()
            .asJson(Map.of("status", Map.of("nodes", Map.of(node, ownEntry))));
    // The same patch on the same status we already patched: our write has not come back through
    // the watch yet, and sending it again would change nothing.
    String seenVersion = k.resource().getMetadata().getResourceVersion();
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
        .patch(PatchContext.of(PatchType.JSON_MERGE), json);
    written.put(k.name(), new Written(seenVersion, json));
    LOG.debug("configuration {}/{}: status written ({})", k.namespace(), k.name(), own.state());
  }

  private static Long number(Object o) {
    return o instanceof Number n ? n.longValue() : null;
  }
}
