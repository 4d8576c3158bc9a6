package io.jakri.controller;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.controller.broker.BrokerTemplates;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.objects.KindDiscovery;
import io.jakri.controller.objects.ObjectKinds;
import io.jakri.controller.queue.Backoff;
import io.jakri.controller.queue.WorkQueue;
import io.jakri.controller.reconcile.ClusterCache;
import io.jakri.controller.reconcile.ConfigurationReconciler;
import io.jakri.controller.reconcile.EventRecorder;
import io.jakri.controller.reconcile.InFlightCreates;
import io.jakri.controller.reconcile.InstanceReconciler;
import io.jakri.controller.reconcile.NodeHealth;
import io.jakri.controller.reconcile.ReconcileKey;
import io.jakri.controller.reconcile.Rejections;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.random.RandomGenerator;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's composition root: builds the cache, the reconcilers and the work queue from a
 * client and options, and wires them together. {@link #startAsync} syncs all caches before the
 * first key is processed (so nothing is judged missing from a half-filled cache); {@link #close}
 * stops the workers and informers. The executors are owned by the caller. One per process.
 */
public final class Controller implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(Controller.class);

  private final ControllerOptions options;
  private final ClusterCache cache;
  private final WorkQueue<ReconcileKey> queue;
  private final ExecutorService workers;
  private final ScheduledExecutorService scheduler;
  private final KubernetesClient client;

  /** How long to wait before asking the API server's discovery again. */
  static final Duration DISCOVERY_RETRY = Duration.ofSeconds(2);

  // Resolved before the caches start (and so before any worker runs); read by the reconcilers.
  private final KindDiscovery kindDiscovery;
  // The kinds the reconcilers may write: those this namespace's cache watches (set before the
  // workers start; grown once the informers of kinds served later have listed).
  private volatile ObjectKinds inUse = ObjectKinds.none();
  private volatile boolean closed;

  /**
   * @param client the controller's client (its requests are what {@link ApiCalls} counts)
   * @param workers runs the worker loops; needs {@link ControllerOptions#workers()} threads
   * @param scheduler runs delayed re-queues
   */
  public Controller(
      KubernetesClient client,
      ControllerOptions options,
      Clock clock,
      ExecutorService workers,
      ScheduledExecutorService scheduler,
      RandomGenerator random) {
    this(
        client,
        options,
        new KindDiscovery(client, options.instanceObjectResources()),
        clock,
        workers,
        scheduler,
        random);
  }

  /**
   * A controller of one namespace whose instance-object kinds come from {@code kinds}, shared with
   * the other namespaces' controllers and the webhook.
   */
  public Controller(
      KubernetesClient client,
      ControllerOptions options,
      KindDiscovery kinds,
      Clock clock,
      ExecutorService workers,
      ScheduledExecutorService scheduler,
      RandomGenerator random) {
    this.kindDiscovery = kinds;
    this.options = options;
    this.workers = workers;
    this.scheduler = scheduler;
    String ns = options.namespace();
    InFlightCreates inFlight = new InFlightCreates(clock);
    this.cache = new ClusterCache(client, ns, options.resync(), inFlight);
    BrokerTemplates templates = new BrokerTemplates(client.getKubernetesSerialization());
    this.client = client;
    InstanceObjects objects = new InstanceObjects(client.getKubernetesSerialization(), () -> inUse);
    Rejections rejections = new Rejections();
    EventRecorder events = new EventRecorder(client, ns, clock);
    NodeHealth nodeHealth = new NodeHealth(cache::node, options.nodeGrace());
    ConfigurationReconciler configurations =
        new ConfigurationReconciler(
            client, ns, cache, inFlight, templates, objects, rejections, clock);
    // The instance reconciler re-queues Configuration keys; the queue exists only after it, so
    // it reaches the queue through this holder.
    QueueRef ref = new QueueRef();
    InstanceReconciler instances =
        new InstanceReconciler(
            client,
            ns,
            cache,
            inFlight,
            templates,
            objects,
            nodeHealth,
            rejections,
            events,
            ref::add,
            options.pendingGrace(),
            clock);
    this.queue =
        new WorkQueue<>(
            key -> {
              if (key instanceof ReconcileKey.InstanceKey k) {
                return instances.reconcile(k.name());
              }
              return configurations.reconcile(key.name());
            },
            new Backoff(options.retryBase(), options.retryMax()),
            scheduler,
            clock,
            random);
    ref.queue = queue;
  }

  private static final class QueueRef {
    private volatile WorkQueue<ReconcileKey> queue;

    void add(ReconcileKey key) {
      queue.add(key);
    }
  }

  /** Why the caches have not synced, if a list or watch failed. */
  public java.util.Optional<String> lastFailure() {
    return cache.lastFailure();
  }

  /** Why the controller is not ready (its caches have not listed once), if it is not. */
  public java.util.Optional<String> notReady() {
    return cache.notReady();
  }

  /**
   * Starts the caches and, once every one has listed (failures are retried, never given up), the
   * workers. Returns at once; the result completes when the workers run.
   */
  public CompletableFuture<Void> startAsync() {
    return resolveKinds()
        .thenCompose(
            k -> {
              inUse = k;
              return cache.start(queue::add, k.served());
            })
        .thenRunAsync(
            () -> {
              queue.start(options.workers(), workers);
              LOG.info(
                  "controller started in namespace {} with {} worker(s)",
                  options.namespace(),
                  options.workers());
              recheckKindsLater();
            },
            scheduler);
  }

  /**
   * While an allowed instance-object resource is not served, looks for it again every {@link
   * KindDiscovery#recheckInterval}: once served, its objects are watched and, when listed, every
   * Configuration and Instance of the namespace is reconciled with it.
   */
  private void recheckKindsLater() {
    if (closed || !inUse.anyUnserved()) {
      return;
    }
    scheduler.schedule(
        () -> {
          if (closed) {
            return;
          }
          ObjectKinds now = kindDiscovery.recheck().orElse(inUse);
          if (now.served().equals(inUse.served())) {
            recheckKindsLater();
            return;
          }
          cache
              .watchObjects(now.served())
              .thenRunAsync(
                  () -> {
                    inUse = now;
                    LOG.info(
                        "namespace {}: instance objects of newly served kinds are reconciled",
                        options.namespace());
                    for (String name : cache.configurationNames()) {
                      queue.add(new ReconcileKey.ConfigurationKey(name));
                      cache
                          .instancesOf(name)
                          .forEach(
                              i ->
                                  queue.add(
                                      new ReconcileKey.InstanceKey(i.getMetadata().getName())));
                    }
                    recheckKindsLater();
                  },
                  scheduler);
        },
        kindDiscovery.recheckInterval().toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * The kinds instance objects may be, resolved with the API server's discovery (once per process,
   * see {@link KindDiscovery}; unserved ones looked for again later); retried every {@link
   * #DISCOVERY_RETRY} (one WARN line each) while the server cannot be reached. Completes at once
   * when no kind is allowed.
   */
  private CompletableFuture<ObjectKinds> resolveKinds() {
    CompletableFuture<ObjectKinds> done = new CompletableFuture<>();
    if (kindDiscovery.none()) {
      done.complete(ObjectKinds.none());
      return done;
    }
    Runnable attempt =
        new Runnable() {
          @Override
          public void run() {
            if (closed) {
              done.cancel(false);
              return;
            }
            try {
              done.complete(kindDiscovery.resolve());
            } catch (KubernetesClientException e) {
              LOG.warn(
                  "discovery of --instance-object-resources failed, retrying: {}",
                  io.jakri.logging.ApiFailure.describe(String.valueOf(client.getMasterUrl()), e));
              scheduler.schedule(this, DISCOVERY_RETRY.toMillis(), TimeUnit.MILLISECONDS);
            }
          }
        };
    scheduler.execute(attempt);
    return done;
  }

  /** {@link #startAsync} and waits up to {@code timeout} for the workers to run. */
  public void start(Duration timeout) throws Exception {
    startAsync().get(timeout.toMillis(), TimeUnit.MILLISECONDS);
  }

  /** Every Pod the controller manages now, from its cache (empty before {@link #start}). */
  public java.util.List<io.fabric8.kubernetes.api.model.Pod> managedPods() {
    return cache.pods();
  }

  /** Keys waiting or in progress. */
  public int queueDepth() {
    return queue.depth();
  }

  /** Whether every informer has listed once. */
  public boolean synced() {
    return cache.synced();
  }

  @Override
  public void close() {
    closed = true;
    queue.close();
    cache.close();
  }
}
