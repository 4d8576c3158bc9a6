package io.jakri.controller;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.Pod;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.informers.ResourceEventHandler;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import io.jakri.controller.objects.KindDiscovery;
import io.jakri.controller.reconcile.ClusterCache;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller across namespaces, as Akri's: one namespace-scoped {@link Controller} per
 * namespace that holds Configurations or Instances, each reconciling the brokers and Services of
 * its namespace's Instances in that namespace. With a list of namespaces, exactly those; with none,
 * every namespace: a watch of Configurations and Instances in all namespaces (names only) starts a
 * namespace's controller when the first one appears there.
 *
 * <p>A namespace's controller stays once started (until {@link #close}), also after its last
 * Configuration went. {@code workers} must have room for {@link ControllerOptions#workers()}
 * threads per namespace (e.g. a cached pool).
 */
public final class AllNamespaces implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(AllNamespaces.class);

  private final KubernetesClient client;
  private final ControllerOptions options;
  private final List<String> only;
  private final Clock clock;
  private final ExecutorService workers;
  private final ScheduledExecutorService scheduler;
  private final RandomGenerator random;
  private final KindDiscovery kinds;
  private final Map<String, Controller> controllers = new ConcurrentHashMap<>();
  private final List<SharedIndexInformer<?>> finders = new ArrayList<>();
  private volatile String lastFailure;
  private final java.util.Set<String> started = ConcurrentHashMap.newKeySet();
  private volatile boolean running;
  private volatile boolean closed;

  /**
   * @param only the namespaces to serve; empty: every namespace
   */
  public AllNamespaces(
      KubernetesClient client,
      ControllerOptions options,
      List<String> only,
      Clock clock,
      ExecutorService workers,
      ScheduledExecutorService scheduler,
      RandomGenerator random) {
    this.client = client;
    this.options = options;
    this.only = List.copyOf(only);
    this.clock = clock;
    this.workers = workers;
    this.scheduler = scheduler;
    this.random = random;
    this.kinds = new KindDiscovery(client, options.instanceObjectResources());
  }

  /** The instance-object kinds every namespace's controller shares (and the webhook with them). */
  public KindDiscovery kinds() {
    return kinds;
  }

  /**
   * Starts: with a list, each namespace's controller; else the namespace finder and, once it has
   * listed, a controller for each namespace it found. Returns at once; the result completes when
   * every controller known by then runs (its caches listed). Failed lists and watches are retried
   * with backoff, one WARN line per attempt, never given up: {@link #notReady} says why meanwhile.
   */
  public CompletableFuture<Void> startAsync() {
    if (!only.isEmpty()) {
      only.forEach(this::serve);
      running = true;
      return CompletableFuture.allOf(
          only.stream().map(this::startOnce).toArray(CompletableFuture[]::new));
    }
    SharedIndexInformer<GenericKubernetesResource> configurations =
        client
            .genericKubernetesResources(Configuration.resourceDefinition())
            .inAnyNamespace()
            .runnableInformer(0);
    SharedIndexInformer<Instance> instances =
        client.resources(Instance.class).inAnyNamespace().runnableInformer(0);
    finders.add(configurations);
    finders.add(instances);
    String server = String.valueOf(client.getMasterUrl());
    ClusterCache.retryWithWarning(
        configurations, "configurations in every namespace", server, f -> lastFailure = f);
    ClusterCache.retryWithWarning(
        instances, "instances in every namespace", server, f -> lastFailure = f);
    configurations.addEventHandler(finder());
    instances.addEventHandler(finder());
    return CompletableFuture.allOf(
            configurations.start().toCompletableFuture(), instances.start().toCompletableFuture())
        // Off the thread that completed the lists (an HTTP client event loop: never block it).
        .thenComposeAsync(
            v -> {
              // Namespaces found by the first list are started here, so the result completes with
              // them synced; any found from now on start on their own.
              running = true;
              LOG.info("controller serving all namespaces ({} found so far)", controllers.size());
              return CompletableFuture.allOf(
                  List.copyOf(controllers.keySet()).stream()
                      .map(this::startOnce)
                      .toArray(CompletableFuture[]::new));
            },
            scheduler);
  }

  /** {@link #startAsync} and waits up to {@code timeout} for it. */
  public void start(Duration timeout) throws Exception {
    startAsync().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  private <T extends io.fabric8.kubernetes.api.model.HasMetadata> ResourceEventHandler<T> finder() {
    return new ResourceEventHandler<>() {
      @Override
      public void onAdd(T obj) {
        found(obj.getMetadata().getNamespace());
      }

      @Override
      public void onUpdate(T oldObj, T newObj) {
        found(newObj.getMetadata().getNamespace());
      }

      @Override
      public void onDelete(T obj, boolean finalStateUnknown) {}
    };
  }

  private void found(String namespace) {
    if (namespace == null || closed || controllers.containsKey(namespace)) {
      return;
    }
    serve(namespace);
    if (running) {
      startOnce(namespace)
          .whenComplete(
              (v, e) -> {
                if (e != null && !closed) {
                  LOG.error("namespace {}: controller did not start: {}", namespace, e.toString());
                }
              });
    }
  }

  private CompletableFuture<Void> startOnce(String namespace) {
    if (started.add(namespace)) {
      return controllers.get(namespace).startAsync();
    }
    return CompletableFuture.completedFuture(null);
  }

  private synchronized Controller serve(String namespace) {
    return controllers.computeIfAbsent(
        namespace,
        ns -> {
          LOG.info("namespace {}: reconciling its Instances' brokers", ns);
          return new Controller(
              client, options.inNamespace(ns), kinds, clock, workers, scheduler, random);
        });
  }

  /** The namespaces served now. */
  public List<String> namespaces() {
    return List.copyOf(controllers.keySet());
  }

  /** Why a cache has not synced, if a list or watch failed. */
  public Optional<String> lastFailure() {
    return Optional.ofNullable(lastFailure)
        .or(
            () ->
                controllers.values().stream()
                    .map(Controller::lastFailure)
                    .flatMap(Optional::stream)
                    .findFirst());
  }

  /**
   * Why the controller is not ready, if it is not: the namespace finder or a namespace's caches
   * have not listed once (with the last failure, if a list or watch failed).
   */
  public Optional<String> notReady() {
    if (only.isEmpty() && !finders.stream().allMatch(SharedIndexInformer::hasSynced)) {
      String failure = lastFailure;
      return Optional.of(
          failure != null
              ? failure
              : "Configurations and Instances of every namespace not listed yet");
    }
    if (!running) {
      return Optional.of("not started");
    }
    return controllers.values().stream()
        .map(Controller::notReady)
        .flatMap(Optional::stream)
        .findFirst();
  }

  /** Every Pod managed now, in every namespace. */
  public List<Pod> managedPods() {
    List<Pod> pods = new ArrayList<>();
    controllers.values().forEach(c -> pods.addAll(c.managedPods()));
    return pods;
  }

  /** Whether every informer has listed once. */
  public boolean synced() {
    return notReady().isEmpty();
  }

  @Override
  public void close() {
    closed = true;
    finders.forEach(SharedIndexInformer::close);
    controllers.values().forEach(Controller::close);
  }
}
