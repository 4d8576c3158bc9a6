package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.batch.v1.Job;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.objects.ServedResource;
import io.jakri.controller.reconcile.ReconcileKey.ConfigurationKey;
import io.jakri.controller.reconcile.ReconcileKey.InstanceKey;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's view of the cluster: one informer each on Configurations, Instances, Nodes and
 * the broker Pods, Jobs and Services it manages (selected by {@link BrokerLabels#MANAGED_BY}), with
 * indexes by Instance, Configuration and node. Reconcilers read only from here, so a reconcile
 * costs no request beyond its writes. Every change is turned into the {@link ReconcileKey}s it
 * affects and handed to the sink given to {@link #start}; informer resyncs re-deliver everything,
 * which makes reconciliation level-based.
 *
 * <p>Reads are thread-safe (informer stores). Start once, close once.
 */
public final class ClusterCache implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ClusterCache.class);
  private static final String BY_INSTANCE = "instance";
  private static final String BY_CONFIGURATION = "configuration";
  private static final String BY_NODE = "node";

  private final KubernetesClient client;
  private final String namespace;
  private final Duration resync;
  private final List<SharedIndexInformer<?>> informers =
      new java.util.concurrent.CopyOnWriteArrayList<>();
  private volatile String lastFailure;
  private SharedIndexInformer<Configuration> configurations;
  private SharedIndexInformer<Instance> instances;
  private SharedIndexInformer<Node> nodes;
  private SharedIndexInformer<Pod> pods;
  private SharedIndexInformer<Job> jobs;
  private SharedIndexInformer<Service> services;

  private final InFlightCreates inFlight;
  private final Map<ServedResource, SharedIndexInformer<GenericKubernetesResource>> objects =
      new java.util.concurrent.ConcurrentHashMap<>();
  private volatile ResourceEventHandler<HasMetadata> owned;
  // Informers of kinds served only after start: not part of readiness (a kind the controller may
  // not list must not make it unready), closed with the rest.
  private final List<SharedIndexInformer<?>> late =
      new java.util.concurrent.CopyOnWriteArrayList<>();

  public ClusterCache(
      KubernetesClient client, String namespace, Duration resync, InFlightCreates inFlight) {
    this.inFlight = inFlight;
    this.client = client;
    this.namespace = namespace;
    this.resync = resync;
  }

  /**
   * Starts all informers; the result completes once each has listed once. From then on every change
   * is reported to {@code sink}. A failed list or watch is retried by the informer with backoff,
   * logged as one WARN line per attempt, and kept as {@link #lastFailure} (for {@link #notReady}).
   */
  public CompletableFuture<Void> start(Consumer<ReconcileKey> sink) {
    return start(sink, List.of());
  }

  /**
   * {@link #start(Consumer)}, also watching the instance objects of each of {@code objectKinds}
   * that carry the controller's labels (namespaced ones in this namespace; cluster-scoped ones
   * labelled with this namespace as {@link InstanceObjects#INSTANCE_NAMESPACE}).
   */
  public CompletableFuture<Void> start(
      Consumer<ReconcileKey> sink, List<ServedResource> objectKinds) {
    long resyncMillis = resync.toMillis();
    configurations =
        client.resources(Configuration.class).inNamespace(namespace).runnableInformer(resyncMillis);
    instances =
        client.resources(Instance.class).inNamespace(namespace).runnableInformer(resyncMillis);
    nodes = client.nodes().runnableInformer(resyncMillis);
    pods =
        client
            .pods()
            .inNamespace(namespace)
            .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
            .runnableInformer(0);
    jobs =
        client
            .batch()
            .v1()
            .jobs()
            .inNamespace(namespace)
            .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
            .runnableInformer(0);
    services =
        client
            .services()
            .inNamespace(namespace)
            .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
            .runnableInformer(0);

    instances.addIndexers(
        Map.of(
            BY_CONFIGURATION,
            i -> i.getSpec() == null ? List.of() : listOf(i.getSpec().getConfigurationName()),
            BY_NODE,
            i ->
                i.getSpec() == null || i.getSpec().getNodes() == null
                    ? List.of()
                    : List.copyOf(i.getSpec().getNodes())));
    pods.addIndexers(Map.of(BY_INSTANCE, ClusterCache::instanceLabel));
    jobs.addIndexers(Map.of(BY_INSTANCE, ClusterCache::instanceLabel));

    configurations.addEventHandler(
        handler(
            c -> {
              sink.accept(new ConfigurationKey(c.getMetadata().getName()));
              instancesOf(c.getMetadata().getName())
                  .forEach(i -> sink.accept(new InstanceKey(i.getMetadata().getName())));
            }));
    instances.addEventHandler(
        handler(
            i -> {
              sink.accept(new InstanceKey(i.getMetadata().getName()));
              if (i.getSpec() != null && i.getSpec().getConfigurationName() != null) {
                sink.accept(new ConfigurationKey(i.getSpec().getConfigurationName()));
              }
            }));
    nodes.addEventHandler(
        handler(
            n ->
                instancesOnNode(n.getMetadata().getName())
                    .forEach(i -> sink.accept(new InstanceKey(i.getMetadata().getName())))));
    owned =
        handler(
            o -> {
              inFlight.done(o);
              Map<String, String> labels =
                  Optional.ofNullable(o.getMetadata().getLabels()).orElse(Map.of());
              Optional.ofNullable(labels.get(BrokerLabels.INSTANCE))
                  .ifPresent(n -> sink.accept(new InstanceKey(n)));
              Optional.ofNullable(labels.get(BrokerLabels.CONFIGURATION))
                  .ifPresent(n -> sink.accept(new ConfigurationKey(n)));
            });
    pods.addEventHandler(owned);
    jobs.addEventHandler(owned);
    services.addEventHandler(owned);

    informers.addAll(List.of(nodes, configurations, instances, pods, jobs, services));
    String server = String.valueOf(client.getMasterUrl());
    Map<String, SharedIndexInformer<?>> named = new java.util.LinkedHashMap<>();
    for (ServedResource kind : objectKinds) {
      SharedIndexInformer<GenericKubernetesResource> informer = objectInformer(kind);
      informers.add(informer);
      named.put("instance objects " + kind.name(), informer);
    }
    named.put("nodes", nodes);
    named.put("configurations", configurations);
    named.put("instances", instances);
    named.put("broker pods", pods);
    named.put("broker jobs", jobs);
    named.put("broker services", services);
    named.forEach(
        (what, informer) ->
            retryWithWarning(informer, what + " in " + namespace, server, f -> lastFailure = f));
    CompletableFuture<?>[] started =
        informers.stream()
            .map(i -> i.start().toCompletableFuture())
            .toArray(CompletableFuture[]::new);
    return CompletableFuture.allOf(started)
        .thenRun(
            () -> {
              lastFailure = null;
              LOG.info(
                  "caches synced: {} configuration(s), {} instance(s), {} node(s), {} broker"
                      + " pod(s)",
                  configurations.getStore().list().size(),
                  instances.getStore().list().size(),
                  nodes.getStore().list().size(),
                  pods.getStore().list().size());
            });
  }

  /**
   * Makes {@code informer} retry every failed list or watch (with its own backoff), logging one
   * WARN line per attempt without a stack trace, and hands each failure's one-line description to
   * {@code failed}.
   */
  public static void retryWithWarning(
      SharedIndexInformer<?> informer, String what, String server, Consumer<String> failed) {
    informer.exceptionHandler(
        (isStarted, t) -> {
          String why = io.jakri.logging.ApiFailure.describe(server, t);
          failed.accept(why);
          LOG.warn("{} list/watch failed, retrying: {}", what, why);
          return true;
        });
  }

  /** The last list/watch failure, for a message when the caches never sync. */
  public Optional<String> lastFailure() {
    return Optional.ofNullable(lastFailure);
  }

  /** Whether every informer has listed at least once. */
  public boolean synced() {
    return !informers.isEmpty() && informers.stream().allMatch(SharedIndexInformer::hasSynced);
  }

  /**
   * Why the cache is not ready, if it is not: the last list/watch failure, or which first lists are
   * still missing.
   */
  public Optional<String> notReady() {
    if (synced()) {
      return Optional.empty();
    }
    String failure = lastFailure;
    if (failure != null) {
      return Optional.of(failure);
    }
    return Optional.of(
        "namespace "
            + namespace
            + ": "
            + (informers.isEmpty() ? "not started" : "first list of its caches not received yet"));
  }

  public Optional<Configuration> configuration(String name) {
    return Optional.ofNullable(configurations.getStore().getByKey(key(name)));
  }

  public Optional<Instance> instance(String name) {
    return Optional.ofNullable(instances.getStore().getByKey(key(name)));
  }

  public List<Instance> instancesOf(String configuration) {
    return instances.getIndexer().byIndex(BY_CONFIGURATION, configuration);
  }

  public List<Instance> instancesOnNode(String node) {
    return instances.getIndexer().byIndex(BY_NODE, node);
  }

  public Optional<Node> node(String name) {
    return Optional.ofNullable(nodes.getStore().getByKey(name));
  }

  /** Every managed Pod (broker Pods and the Pods of broker Jobs); empty before {@link #start}. */
  public List<Pod> pods() {
    SharedIndexInformer<Pod> informer = pods;
    return informer == null ? List.of() : informer.getStore().list();
  }

  /** The managed broker Pods labelled with {@code instance}. */
  public List<Pod> podsOf(String instance) {
    return pods.getIndexer().byIndex(BY_INSTANCE, instance);
  }

  public Optional<Pod> pod(String name) {
    return Optional.ofNullable(pods.getStore().getByKey(key(name)));
  }

  /** The managed broker Jobs labelled with {@code instance}. */
  public List<Job> jobsOf(String instance) {
    return jobs.getIndexer().byIndex(BY_INSTANCE, instance);
  }

  public Optional<Job> job(String name) {
    return Optional.ofNullable(jobs.getStore().getByKey(key(name)));
  }

  /** A managed instance object observed, with where it is served. */
  public record ObservedObject(ServedResource where, GenericKubernetesResource object) {}

  /**
   * Also watches the instance objects of each of {@code kinds} not watched yet (kinds the API
   * server started serving after {@link #start}); the result completes once each new one has
   * listed.
   */
  public CompletableFuture<Void> watchObjects(List<ServedResource> kinds) {
    String server = String.valueOf(client.getMasterUrl());
    List<CompletableFuture<?>> started = new ArrayList<>();
    for (ServedResource kind : kinds) {
      if (objects.containsKey(kind)) {
        continue;
      }
      SharedIndexInformer<GenericKubernetesResource> informer = objectInformer(kind);
      late.add(informer);
      retryWithWarning(
          informer,
          "instance objects " + kind.name() + " in " + namespace,
          server,
          f -> lastFailure = f);
      started.add(informer.start().toCompletableFuture());
    }
    return CompletableFuture.allOf(started.toArray(CompletableFuture[]::new));
  }

  /** The names of the Configurations in the cache. */
  public List<String> configurationNames() {
    return configurations.getStore().list().stream().map(c -> c.getMetadata().getName()).toList();
  }

  private SharedIndexInformer<GenericKubernetesResource> objectInformer(ServedResource kind) {
    var resources = client.genericKubernetesResources(kind.context());
    var selected =
        kind.namespaced()
            ? resources
                .inNamespace(namespace)
                .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
            : resources
                .withLabel(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER)
                .withLabel(InstanceObjects.INSTANCE_NAMESPACE, namespace);
    SharedIndexInformer<GenericKubernetesResource> informer = selected.runnableInformer(0);
    informer.addIndexers(Map.of(BY_INSTANCE, ClusterCache::instanceLabel));
    informer.addEventHandler(owned);
    objects.put(kind, informer);
    return informer;
  }

  /** The managed instance objects labelled with {@code instance}, of every watched kind. */
  public List<ObservedObject> objectsOf(String instance) {
    List<ObservedObject> out = new ArrayList<>();
    objects.forEach(
        (where, informer) ->
            informer
                .getIndexer()
                .byIndex(BY_INSTANCE, instance)
                .forEach(o -> out.add(new ObservedObject(where, o))));
    return out;
  }

  /** A managed instance object by kind and name. */
  public Optional<GenericKubernetesResource> object(ServedResource where, String name) {
    SharedIndexInformer<GenericKubernetesResource> informer = objects.get(where);
    if (informer == null) {
      return Optional.empty();
    }
    return Optional.ofNullable(informer.getStore().getByKey(where.namespaced() ? key(name) : name));
  }

  /** A managed Service by name. */
  public Optional<Service> service(String name) {
    return Optional.ofNullable(services.getStore().getByKey(key(name)));
  }

  @Override
  public void close() {
    informers.forEach(SharedIndexInformer::stop);
    late.forEach(SharedIndexInformer::stop);
  }

  private String key(String name) {
    return namespace + "/" + name;
  }

  private static List<String> instanceLabel(HasMetadata o) {
    Map<String, String> labels = o.getMetadata().getLabels();
    return labels == null ? List.of() : listOf(labels.get(BrokerLabels.INSTANCE));
  }

  private static List<String> listOf(String value) {
    return value == null ? List.of() : List.of(value);
  }

  private static <T extends HasMetadata> ResourceEventHandler<T> handler(Consumer<T> onAny) {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        onAny.accept(obj);
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        onAny.accept(newObj);
        if (!Objects.equals(key(oldObj), key(newObj))) {
          onAny.accept(oldObj);
        }
      }

      @Override
      public void onDelete(T obj, boolean deletedFinalStateUnknown) {
        onAny.accept(obj);
      }
    };
  }

  /** What an update may have moved away from (an Instance's Configuration or nodes). */
  private static Object key(HasMetadata o) {
    if (o instanceof Instance i && i.getSpec() != null) {
      return List.of(
          String.valueOf(i.getSpec().getConfigurationName()),
          String.valueOf(i.getSpec().getNodes()));
    }
    return o.getMetadata().getLabels();
  }
}
