package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.reconcile.ClusterCache.ObservedObject;
import io.jakri.controller.reconcile.ReconcileKey.ConfigurationKey;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.SlotUsage;
import java.net.HttpURLConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeParseException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Makes one Instance's broker objects match its Configuration and nodes.
 *
 * <p>In order: an Instance that is gone takes all its Pods, Jobs and its Service with it. Nodes
 * that are gone or NotReady past the grace period are removed from the Instance and their slots
 * freed (an Instance left without nodes is deleted); the resulting Instance update triggers the
 * next run. Otherwise the desired objects ({@link BrokerTemplates}) are compared with the cached
 * ones: a missing Pod, Job or Service is created; a Pod whose template hash differs (the
 * Configuration changed), that ended ({@code Succeeded}/{@code Failed}) or that stayed {@code
 * Pending} past {@code pendingGrace} is deleted and re-created on the run its deletion triggers;
 * Jobs of an older Configuration generation and objects for nodes no longer listed are deleted.
 *
 * <p>Idempotent and level-based: it reads only the cache and writes only differences, so running it
 * twice in a row changes nothing the second time. Returns when it wants to run again (the end of a
 * grace period). Called by one worker at a time per key; thread-safe across keys.
 */
public final class InstanceReconciler {

  private static final Logger LOG = LoggerFactory.getLogger(InstanceReconciler.class);
  private static final int CONFLICT_ATTEMPTS = 5;

  /** The reason of the Event and condition for a refused brokerSpec. */
  public static final String REJECTED = "BrokerSpecRejected";

  /**
   * The reason of the Event and condition for a broker create the API server forbade (403): by
   * admission (a namespace without the ServiceAccount the Pod runs as) or by RBAC.
   */
  public static final String FORBIDDEN = "BrokerCreateForbidden";

  private final KubernetesClient client;
  private final String namespace;
  private final ClusterCache cache;
  private final BrokerTemplates templates;
  private final NodeHealth nodeHealth;
  private final Rejections rejections;
  private final EventRecorder events;
  private final Consumer<ReconcileKey> requeue;
  private final Duration pendingGrace;
  private final Clock clock;
  private final Writes writes;
  private final InstanceObjects objects;

  public InstanceReconciler(
      KubernetesClient client,
      String namespace,
      ClusterCache cache,
      InFlightCreates inFlight,
      BrokerTemplates templates,
      InstanceObjects objects,
      NodeHealth nodeHealth,
      Rejections rejections,
      EventRecorder events,
      Consumer<ReconcileKey> requeue,
      Duration pendingGrace,
      Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.cache = cache;
    this.templates = templates;
    this.objects = objects;
    this.nodeHealth = nodeHealth;
    this.rejections = rejections;
    this.events = events;
    this.requeue = requeue;
    this.pendingGrace = pendingGrace;
    this.clock = clock;
    this.writes = new Writes(client, namespace, inFlight);
  }

  /**
   * Reconciles Instance {@code name}.
   *
   * @return when to run again, if a grace period is running
   * @throws RuntimeException on a failed write (the queue retries with backoff)
   */
  public Optional<Duration> reconcile(String name) {
    Optional<Instance> found = cache.instance(name);
    if (found.isEmpty()) {
      removeAll(name, "Instance is gone");
      return Optional.empty();
    }
    Instance instance = found.get();
    Instant now = clock.instant();
    List<String> nodes =
        instance.getSpec() == null || instance.getSpec().getNodes() == null
            ? List.of()
            : List.copyOf(new LinkedHashSet<>(instance.getSpec().getNodes()));
    Set<String> gone = new LinkedHashSet<>();
    Optional<Instant> wakeUp = Optional.empty();
    for (String node : nodes) {
      Optional<Instant> at = nodeHealth.evictionTime(node);
      if (at.isPresent() && !at.get().isAfter(now)) {
        gone.add(node);
      } else if (at.isPresent()) {
        wakeUp = earliest(wakeUp, at.get());
      }
    }
    if (!gone.isEmpty()) {
      evictNodes(instance, gone);
      return Optional.empty();
    }

    String configurationName = instance.getSpec().getConfigurationName();
    Optional<Configuration> configuration = cache.configuration(configurationName);
    Map<String, Pod> desiredPods = new LinkedHashMap<>();
    Optional<Job> desiredJob = Optional.empty();
    Optional<Service> desiredService = Optional.empty();
    List<InstanceObjects.Desired> desiredObjects = List.of();
    if (configuration.isPresent()) {
      desiredObjects = objects.render(configuration.get(), instance);
      for (String node : nodes) {
        templates
            .pod(configuration.get(), instance, node)
            // An unshared Instance's Pod name has no node part (Akri's): the first node wins.
            .ifPresent(p -> desiredPods.putIfAbsent(p.getMetadata().getName(), p));
      }
      if (!nodes.isEmpty()) {
        desiredJob = templates.job(configuration.get(), instance);
      }
      if (!desiredPods.isEmpty() || desiredJob.isPresent()) {
        desiredService = templates.instanceService(configuration.get(), instance);
      }
    }

    RuntimeException failure = null;
    try {
      wakeUp = earliest(wakeUp, syncPods(desiredPods, cache.podsOf(name), now));
      syncJob(desiredJob, cache.jobsOf(name));
      syncService(BrokerNames.instanceServiceName(name), desiredService);
      syncObjects(desiredObjects, cache.objectsOf(name));
    } catch (Writes.Rejected e) {
      failure = e;
      rejections.record(configurationName, name, e.reason(), e.summary());
      configuration.ifPresent(c -> events.warn(c, e.reason(), e.summary()));
      requeue.accept(new ConfigurationKey(configurationName));
      LOG.warn("Instance({}/{}): {}", namespace, name, e.getMessage());
    }
    if (failure != null) {
      throw failure;
    }
    if (rejections.clear(configurationName, name)) {
      requeue.accept(new ConfigurationKey(configurationName));
    }
    return wakeUp.map(at -> Duration.between(now, at).plusMillis(10));
  }

  /** Creates, replaces or deletes Pods; returns the earliest end of a Pending grace period. */
  private Optional<Instant> syncPods(Map<String, Pod> desired, List<Pod> observed, Instant now) {
    Optional<Instant> wakeUp = Optional.empty();
    Map<String, Pod> byName = new LinkedHashMap<>();
    observed.forEach(p -> byName.put(p.getMetadata().getName(), p));
    for (Pod want : desired.values()) {
      Pod have = byName.remove(want.getMetadata().getName());
      if (have == null) {
        writes.create(want);
        continue;
      }
      if (have.getMetadata().getDeletionTimestamp() != null) {
        continue;
      }
      String phase = have.getStatus() == null ? null : have.getStatus().getPhase();
      if (!Objects.equals(hash(want), hash(have))) {
        writes.delete(have, "its Configuration changed");
      } else if ("Succeeded".equals(phase) || "Failed".equals(phase)) {
        writes.delete(have, "it ended (" + phase + ")");
      } else if (phase == null || "Pending".equals(phase)) {
        Optional<Instant> created = parse(have.getMetadata().getCreationTimestamp());
        if (created.isPresent()) {
          Instant deadline = created.get().plus(pendingGrace);
          if (!deadline.isAfter(now)) {
            writes.delete(have, "Pending for longer than " + pendingGrace);
          } else {
            wakeUp = earliest(wakeUp, deadline);
          }
        }
      }
    }
    for (Pod extra : byName.values()) {
      writes.delete(extra, "its node is no longer listed for the Instance");
    }
    return wakeUp;
  }

  private void syncJob(Optional<Job> desired, List<Job> observed) {
    boolean present = false;
    for (Job have : observed) {
      if (desired.isPresent()
          && desired.get().getMetadata().getName().equals(have.getMetadata().getName())) {
        present = true;
      } else {
        writes.delete(have, "not the Job of the current Configuration generation");
      }
    }
    if (desired.isPresent() && !present) {
      writes.create(desired.get());
    }
  }

  private void syncService(String name, Optional<Service> desired) {
    Optional<Service> observed = cache.service(name);
    if (desired.isEmpty()) {
      observed.ifPresent(s -> writes.delete(s, "no brokers left"));
      return;
    }
    if (observed.isEmpty()) {
      writes.create(desired.get());
    } else if (!Objects.equals(hash(desired.get()), hash(observed.get()))) {
      writes.updateService(observed.get(), desired.get());
    }
  }

  /**
   * Creates missing instance objects, applies changed ones, deletes the ones no template gives any
   * more. Every template is tried; the first refusal (a kind not allowed, a property missing, an
   * object the API server refused or that is not the controller's) is thrown after the others.
   */
  private void syncObjects(List<InstanceObjects.Desired> desired, List<ObservedObject> observed) {
    Map<String, ObservedObject> byKey = new LinkedHashMap<>();
    observed.forEach(o -> byKey.put(objectKey(o.where(), o.object()), o));
    Writes.Rejected first = null;
    for (InstanceObjects.Desired d : desired) {
      try {
        if (d instanceof InstanceObjects.Desired.Refused r) {
          throw new Writes.Rejected(r.reason(), r.message());
        }
        InstanceObjects.Desired.Rendered want = (InstanceObjects.Desired.Rendered) d;
        ObservedObject have = byKey.remove(objectKey(want.where(), want.object()));
        if (have == null) {
          writes.createObject(want.where(), want.object());
        } else if (have.object().getMetadata().getDeletionTimestamp() == null
            && !Objects.equals(hash(want.object()), hash(have.object()))) {
          writes.applyObject(want.where(), want.object());
        }
      } catch (Writes.Rejected e) {
        first = first == null ? e : first;
      }
    }
    for (ObservedObject extra : byKey.values()) {
      writes.deleteObject(
          extra.where(), extra.object(), "no template of its Configuration gives it");
    }
    if (first != null) {
      throw first;
    }
  }

  private static String objectKey(
      io.jakri.controller.objects.ServedResource where,
      io.fabric8.kubernetes.api.model.GenericKubernetesResource o) {
    return where.name() + "/" + o.getMetadata().getName();
  }

  private void removeAll(String instance, String why) {
    cache.objectsOf(instance).forEach(o -> writes.deleteObject(o.where(), o.object(), why));
    cache.podsOf(instance).forEach(p -> writes.delete(p, why));
    cache.jobsOf(instance).forEach(j -> writes.delete(j, why));
    cache.service(BrokerNames.instanceServiceName(instance)).ifPresent(s -> writes.delete(s, why));
  }

  /**
   * Removes {@code gone} from the Instance's nodes and frees their slots, with optimistic
   * concurrency (the update carries the resourceVersion; on 409 the Instance is read again and the
   * change re-applied). Deletes the Instance when no node is left.
   */
  private void evictNodes(Instance cached, Set<String> gone) {
    Instance current = cached;
    for (int attempt = 1; attempt <= CONFLICT_ATTEMPTS; attempt++) {
      Instance next = client.getKubernetesSerialization().clone(current);
      List<String> nodes = new ArrayList<>(next.getSpec().getNodes());
      if (!nodes.removeAll(gone)) {
        return;
      }
      String name = next.getMetadata().getName();
      try {
        if (nodes.isEmpty()) {
          client.resources(Instance.class).inNamespace(namespace).withName(name).delete();
          LOG.info("Instance({}/{}) deleted: its last node(s) {} went away", namespace, name, gone);
          return;
        }
        next.getSpec().setNodes(nodes);
        Map<String, String> usage = new LinkedHashMap<>(next.getSpec().getDeviceUsage());
        usage.replaceAll((slot, holder) -> heldByAny(holder, gone) ? "" : holder);
        next.getSpec().setDeviceUsage(usage);
        client.resources(Instance.class).inNamespace(namespace).resource(next).update();
        LOG.info(
            "Instance({}/{}): removed node(s) {} and freed their slots", namespace, name, gone);
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != HttpURLConnection.HTTP_CONFLICT || attempt == CONFLICT_ATTEMPTS) {
          throw e;
        }
        Instance fresh =
            client.resources(Instance.class).inNamespace(namespace).withName(name).get();
        if (fresh == null) {
          return;
        }
        current = fresh;
      }
    }
  }

  /**
   * Whether a {@code deviceUsage} value is held by one of {@code nodes}, read with the agent's own
   * {@link SlotUsage} parser; a malformed value is held by no one (and is left as it is).
   */
  static boolean heldByAny(String holder, Set<String> nodes) {
    try {
      SlotUsage usage = SlotUsage.parse(holder);
      return nodes.stream().anyMatch(usage::heldBy);
    } catch (IllegalArgumentException e) {
      return false;
    }
  }

  private static String hash(io.fabric8.kubernetes.api.model.HasMetadata o) {
    Map<String, String> a = o.getMetadata().getAnnotations();
    return a == null ? null : a.get(BrokerLabels.TEMPLATE_HASH);
  }

  private static Optional<Instant> parse(String timestamp) {
    if (timestamp == null) {
      return Optional.empty();
    }
    try {
      return Optional.of(Instant.parse(timestamp));
    } catch (DateTimeParseException e) {
      return Optional.empty();
    }
  }

  private static Optional<Instant> earliest(Optional<Instant> a, Instant b) {
    return Optional.of(a.filter(x -> x.isBefore(b)).orElse(b));
  }

  private static Optional<Instant> earliest(Optional<Instant> a, Optional<Instant> b) {
    return b.isPresent() ? earliest(a, b.get()) : a;
  }
}
