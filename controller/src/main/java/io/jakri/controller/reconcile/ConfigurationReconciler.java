package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.Condition;
import io.fabric8.kubernetes.api.model.ConditionBuilder;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.crd.Configuration;
import io.jakri.crd.ConfigurationConditions;
import io.jakri.crd.ConfigurationStatus;
import io.jakri.crd.Instance;
import io.jakri.crd.NodeDiscoveryStatus;
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
 * <p>The controller owns {@code status.conditions}, {@code status.instances} and {@code
 * status.observedGeneration}; each agent owns only its {@code status.nodes.<node>} entry. The
 * conditions {@code Discovering}, {@code Invalid}, {@code HandlerMissing} and {@code Failed} are
 * derived from all nodes' entries ({@link ConfigurationConditions}); {@value #CONDITION} is {@code
 * False}/{@value InstanceReconciler#REJECTED} (or {@value InstanceReconciler#FORBIDDEN}) while the
 * API server refuses a broker object of this Configuration (the message names the field), {@code
 * True}/{@code BrokersCreated} once every desired broker exists, unchanged in between, absent when
 * there is no brokerSpec. The status is written only when it differs from the cached one, with one
 * JSON patch of exactly those three fields, so the nodes' entries stay as they are. Idempotent;
 * called by one worker at a time per key.
 */
public final class ConfigurationReconciler {

  /** The condition type the controller owns. */
  public static final String CONDITION = "BrokersReady";

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationReconciler.class);

  /**
   * The least time between two status writes of one Configuration: a burst of Instances (each
   * changing the count) or of node entries costs one write per interval, not one per change.
   */
  public static final Duration STATUS_INTERVAL = Duration.ofSeconds(1);

  private final Map<String, Instant> lastStatusWrites = new ConcurrentHashMap<>();

  private final String namespace;
  private final ClusterCache cache;
  private final BrokerTemplates templates;
  private final ExpectedBrokers expected;
  private final Rejections rejections;
  private final Clock clock;
  private final Writes writes;

  public ConfigurationReconciler(
      KubernetesClient client,
      String namespace,
      ClusterCache cache,
      InFlightCreates inFlight,
      BrokerTemplates templates,
      InstanceObjects objects,
      Rejections rejections,
      Clock clock) {
    this.namespace = namespace;
    this.cache = cache;
    this.templates = templates;
    this.expected = new ExpectedBrokers(templates, objects);
    this.rejections = rejections;
    this.clock = clock;
    this.writes = new Writes(client, namespace, inFlight);
  }

  /**
   * Reconciles Configuration {@code name}; throws on a failed write (retried with backoff). Returns
   * when to run again if a status write was held back by {@link #STATUS_INTERVAL}.
   */
  public Optional<Duration> reconcile(String name) {
    Optional<Service> observed = cache.service(BrokerNames.configurationServiceName(name));
    Optional<Configuration> found = cache.configuration(name);
    if (found.isEmpty()) {
      observed.ifPresent(s -> writes.delete(s, "Configuration is gone"));
      rejections.forget(name);
      expected.forget(name);
      lastStatusWrites.remove(name);
      return Optional.empty();
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
      rejections.record(name, "", e.reason(), e.summary());
    }
    return writeStatus(configuration, instances.size(), wantedCondition(configuration, instances));
  }

  /** The condition to hold: empty = remove it; {@code null} status = leave it as it is. */
  private Optional<Condition> wantedCondition(Configuration c, List<Instance> instances) {
    if (!BrokerTemplates.hasBrokers(c) && !InstanceObjects.any(c)) {
      return Optional.empty();
    }
    long generation = Optional.ofNullable(c.getMetadata().getGeneration()).orElse(0L);
    Optional<Rejections.Rejection> rejected = rejections.first(c.getMetadata().getName());
    if (rejected.isPresent()) {
      return Optional.of(
          condition("False", rejected.get().reason(), rejected.get().message(), generation));
    }
    if (expected.allExist(c, instances, ExpectedBrokers.Observed.of(cache))) {
      return Optional.of(
          condition("True", "BrokersCreated", "every Instance's brokers exist", generation));
    }
    return Optional.of(condition(null, null, null, generation));
  }

  /**
   * Writes the conditions, the Instance count and the observed generation when they differ from the
   * cached status. {@code brokers}: empty = no {@value #CONDITION}; a {@code null} status = keep
   * the current one.
   */
  private Optional<Duration> writeStatus(
      Configuration cached, int instanceCount, Optional<Condition> brokers) {
    long generation = Optional.ofNullable(cached.getMetadata().getGeneration()).orElse(0L);
    ConfigurationStatus status = cached.getStatus();
    List<Condition> current =
        status == null || status.getConditions() == null ? List.of() : status.getConditions();
    Map<String, NodeDiscoveryStatus> nodes =
        status == null || status.getNodes() == null ? Map.of() : status.getNodes();
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    List<Condition> conditions =
        new ArrayList<>(ConfigurationConditions.derive(nodes, current, generation, now));
    Optional<Condition> previousBrokers =
        current.stream().filter(c -> CONDITION.equals(c.getType())).findFirst();
    Optional<Condition> nextBrokers =
        brokers.isPresent() && brokers.get().getStatus() == null ? previousBrokers : brokers;
    nextBrokers.ifPresent(
        next -> {
          if (next != previousBrokers.orElse(null)) {
            next.setLastTransitionTime(
                previousBrokers
                    .filter(p -> Objects.equals(p.getStatus(), next.getStatus()))
                    .map(Condition::getLastTransitionTime)
                    .orElse(now));
          }
          conditions.add(next);
        });
    boolean same =
        status != null
            && sameConditions(current, conditions)
            && Objects.equals(status.getInstances(), instanceCount)
            && Objects.equals(status.getObservedGeneration(), generation);
    if (same) {
      return Optional.empty();
    }
    String name = cached.getMetadata().getName();
    Instant last = lastStatusWrites.get(name);
    Instant at = clock.instant();
    if (last != null && at.isBefore(last.plus(STATUS_INTERVAL))) {
      return Optional.of(Duration.between(at, last.plus(STATUS_INTERVAL)));
    }
    List<Map<String, Object>> ops = new ArrayList<>();
    if (status == null) {
      Map<String, Object> full = new LinkedHashMap<>();
      full.put("conditions", conditions);
      full.put("instances", instanceCount);
      full.put("observedGeneration", generation);
      ops.add(op("/status", full));
    } else {
      ops.add(op("/status/conditions", conditions));
      ops.add(op("/status/instances", instanceCount));
      ops.add(op("/status/observedGeneration", generation));
    }
    writes.patchStatus(Configuration.class, name, ops);
    lastStatusWrites.put(name, at);
    String brokersBefore = previousBrokers.map(ConfigurationReconciler::describe).orElse("absent");
    String brokersAfter = nextBrokers.map(ConfigurationReconciler::describe).orElse("absent");
    if (!brokersBefore.equals(brokersAfter)) {
      LOG.info(
          "Configuration({}/{}): condition {} {}",
          namespace,
          cached.getMetadata().getName(),
          CONDITION,
          nextBrokers.isPresent() ? brokersAfter : "removed");
    } else {
      LOG.debug(
          "Configuration({}/{}): status written ({} Instance(s))",
          namespace,
          cached.getMetadata().getName(),
          instanceCount);
    }
    return Optional.empty();
  }

  private static String describe(Condition c) {
    return c.getStatus() + " (" + c.getReason() + "): " + c.getMessage();
  }

  private static boolean sameConditions(List<Condition> a, List<Condition> b) {
    if (a.size() != b.size()) {
      return false;
    }
    for (int i = 0; i < a.size(); i++) {
      if (!ConfigurationConditions.same(a.get(i), b.get(i))) {
        return false;
      }
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
    return ExpectedBrokers.hash(o);
  }
}
