package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes one Configuration's Service and its {@value #CONDITION} condition match its brokers.
 *
 * <p>The Service {@code <configuration>-svc} exists while the Configuration has a {@code
 * configurationServiceSpec}, a brokerSpec and at least one Instance with a node; it is removed
 * otherwise (also when the Configuration is gone).
 *
 * <p>The condition belongs to the controller alone: {@code False}/{@value
 * InstanceReconciler#REJECTED} while the API server refuses a broker object of this Configuration
 * (the message names the field), {@code True}/{@code BrokersCreated} once every desired broker
 * exists, unchanged in between, absent when there is no brokerSpec. It is written only when it
 * changes, with a JSON patch that re-writes {@code status.conditions} from a fresh read with only
 * this condition replaced, so the agents' conditions and {@code status.nodes} entries stay as they
 * are. Idempotent; called by one worker at a time per key.
 */
public final class ConfigurationReconciler {

  /** The condition type the controller owns. */
  public static final String CONDITION = "BrokersReady";

  /**
   * How soon a condition the controller wrote, and that someone else then removed, is written
   * again. Today's agents rewrite {@code status.conditions} with only their own types whenever the
   * Configuration changes (our write is such a change), so re-adding at once would ping-pong
   * without end; this bounds it to one write per interval per Configuration.
   */
  public static final Duration REWRITE_INTERVAL = Duration.ofMinutes(1);

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationReconciler.class);

  private record LastWrite(String fingerprint, Instant at) {}

  private final Map<String, LastWrite> lastWrites = new ConcurrentHashMap<>();

  private final KubernetesClient client;
  private final String namespace;
  private final ClusterCache cache;
  private final BrokerTemplates templates;
  private final Rejections rejections;
  private final Clock clock;
  private final Writes writes;

  public ConfigurationReconciler(
      KubernetesClient client,
      String namespace,
      ClusterCache cache,
      InFlightCreates inFlight,
      BrokerTemplates templates,
      Rejections rejections,
      Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.cache = cache;
    this.templates = templates;
    this.rejections = rejections;
    this.clock = clock;
    this.writes = new Writes(client, namespace, inFlight);
  }

  /** Reconciles Configuration {@code name}; throws on a failed write (retried with backoff). */
  public void reconcile(String name) {
    Optional<Service> observed = cache.service(BrokerNames.configurationServiceName(name));
    Optional<Configuration> found = cache.configuration(name);
    if (found.isEmpty()) {
      observed.ifPresent(s -> writes.delete(s, "Configuration is gone"));
      rejections.forget(name);
      lastWrites.remove(name);
      return;
    }
    Configuration configuration = found.get();
    List<Instance> instances = cache.instancesOf(name);
    boolean anyBrokers =
        BrokerTemplates.hasBrokers(configuration)
            && instances.stream().anyMatch(i -> !nodes(i).isEmpty());
    Optional<Service> desired =
        anyBrokers ? templates.configurationService(configuration) : Optional.empty();
    try {
      if (desired.isEmpty()) {
        observed.ifPresent(s -> writes.delete(s, "no brokers left"));
      } else if (observed.isEmpty()) {
        writes.create(desired.get());
      } else if (!Objects.equals(hash(desired.get()), hash(observed.get()))) {
        writes.updateService(observed.get(), desired.get());
      }
    } catch (Writes.Rejected e) {
      rejections.record(name, "", e.summary());
    }
    writeCondition(configuration, wantedCondition(configuration, instances));
  }

  /** The condition to hold: empty = remove it; {@code null} status = leave it as it is. */
  private Optional<Condition> wantedCondition(Configuration c, List<Instance> instances) {
    if (!BrokerTemplates.hasBrokers(c)) {
      return Optional.empty();
    }
    long generation = Optional.ofNullable(c.getMetadata().getGeneration()).orElse(0L);
    Optional<String> rejected = rejections.first(c.getMetadata().getName());
    if (rejected.isPresent()) {
      return Optional.of(
          condition("False", InstanceReconciler.REJECTED, rejected.get(), generation));
    }
    if (allBrokersExist(c, instances)) {
      return Optional.of(
          condition("True", "BrokersCreated", "every Instance's brokers exist", generation));
    }
    return Optional.of(condition(null, null, null, generation));
  }

  private boolean allBrokersExist(Configuration c, List<Instance> instances) {
    for (Instance i : instances) {
      for (String node : nodes(i)) {
        var pod = templates.pod(c, i, node);
        if (pod.isPresent()
            && cache
                .pod(pod.get().getMetadata().getName())
                .filter(p -> Objects.equals(hash(p), hash(pod.get())))
                .isEmpty()) {
          return false;
        }
      }
      if (!nodes(i).isEmpty()) {
        var job = templates.job(c, i);
        if (job.isPresent() && cache.job(job.get().getMetadata().getName()).isEmpty()) {
          return false;
        }
      }
    }
    return true;
  }

  private void writeCondition(Configuration cached, Optional<Condition> wanted) {
    Optional<Condition> current = ownCondition(cached);
    if (wanted.isPresent() && wanted.get().getStatus() == null) {
      return;
    }
    if (wanted.isEmpty()
        ? current.isEmpty()
        : current.filter(c -> same(c, wanted.get())).isPresent()) {
      return;
    }
    String name = cached.getMetadata().getName();
    String fingerprint = wanted.map(ConfigurationReconciler::fingerprint).orElse("");
    Instant now = clock.instant();
    LastWrite last = lastWrites.get(name);
    if (last != null
        && last.fingerprint().equals(fingerprint)
        && now.isBefore(last.at().plus(REWRITE_INTERVAL))) {
      LOG.debug(
          "Configuration({}/{}): {} was removed by another writer; not re-adding yet",
          namespace,
          name,
          CONDITION);
      return;
    }
    // Read fresh so the agents' latest conditions are kept; only ours is replaced.
    Configuration fresh =
        client
            .resources(Configuration.class)
            .inNamespace(namespace)
            .withName(cached.getMetadata().getName())
            .get();
    if (fresh == null) {
      return;
    }
    List<Condition> conditions = new ArrayList<>();
    Optional<Condition> previous = Optional.empty();
    if (fresh.getStatus() != null && fresh.getStatus().getConditions() != null) {
      for (Condition c : fresh.getStatus().getConditions()) {
        if (CONDITION.equals(c.getType())) {
          previous = Optional.of(c);
        } else {
          conditions.add(c);
        }
      }
    }
    if (wanted.isPresent()) {
      Condition next = wanted.get();
      if (previous.filter(p -> same(p, next)).isPresent()) {
        return;
      }
      String stamp = now.truncatedTo(ChronoUnit.SECONDS).toString();
      next.setLastTransitionTime(
          previous
              .filter(p -> Objects.equals(p.getStatus(), next.getStatus()))
              .map(Condition::getLastTransitionTime)
              .orElse(stamp));
      conditions.add(next);
    } else if (previous.isEmpty()) {
      return;
    }
    Map<String, Object> op = new LinkedHashMap<>();
    op.put("op", "add");
    if (fresh.getStatus() == null) {
      op.put("path", "/status");
      op.put("value", Map.of("conditions", conditions));
    } else {
      op.put("path", "/status/conditions");
      op.put("value", conditions);
    }
    writes.patchStatus(Configuration.class, cached.getMetadata().getName(), List.of(op));
    lastWrites.put(name, new LastWrite(fingerprint, now));
    LOG.info(
        "Configuration({}/{}): condition {} {}",
        namespace,
        cached.getMetadata().getName(),
        CONDITION,
        wanted
            .map(c -> c.getStatus() + " (" + c.getReason() + "): " + c.getMessage())
            .orElse("removed"));
  }

  private static Optional<Condition> ownCondition(Configuration c) {
    if (c.getStatus() == null || c.getStatus().getConditions() == null) {
      return Optional.empty();
    }
    return c.getStatus().getConditions().stream()
        .filter(x -> CONDITION.equals(x.getType()))
        .findFirst();
  }

  private static String fingerprint(Condition c) {
    return c.getStatus()
        + "\n"
        + c.getReason()
        + "\n"
        + c.getMessage()
        + "\n"
        + c.getObservedGeneration();
  }

  private static boolean same(Condition a, Condition b) {
    return Objects.equals(a.getStatus(), b.getStatus())
        && Objects.equals(a.getReason(), b.getReason())
        && Objects.equals(a.getMessage(), b.getMessage())
        && Objects.equals(a.getObservedGeneration(), b.getObservedGeneration());
  }

  private static Condition condition(String status, String reason, String message, long gen) {
    return new ConditionBuilder()
        .withType(CONDITION)
        .withStatus(status)
        .withReason(reason)
        .withMessage(message)
        .withObservedGeneration(gen)
        .build();
  }

  private static List<String> nodes(Instance i) {
    return i.getSpec() == null || i.getSpec().getNodes() == null
        ? List.of()
        : i.getSpec().getNodes();
  }

  private static String hash(io.fabric8.kubernetes.api.model.HasMetadata o) {
    Map<String, String> a = o.getMetadata().getAnnotations();
    return a == null ? null : a.get(BrokerLabels.TEMPLATE_HASH);
  }
}
