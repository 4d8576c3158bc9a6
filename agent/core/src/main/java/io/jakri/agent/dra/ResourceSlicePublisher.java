package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.LocalDevice;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's devices as {@code resource.k8s.io/v1} ResourceSlices of driver {@code
 * akri.sh}: one pool per Configuration ({@link DraNames#pool}), one device per slot that is free or
 * held for a ResourceClaim on this node (a slot held through a device-plugin resource or by another
 * node is left out, so the scheduler cannot allocate it twice), of devices online here; at most
 * {@value #MAX_DEVICES_PER_SLICE} devices per slice.
 *
 * <p>Shared Instances are not in that pool: each is published once, in its Configuration's pool
 * {@link DraNames#sharedPool}, with {@code perDeviceNodeSelection} and a node selector per device
 * listing the Instance's {@code nodes}; one device per slot that is free or held for a
 * ResourceClaim on any node. That pool has one writer, its owner: the first node, in name order, of
 * the {@code nodes} of the Configuration's shared Instances, which every agent computes the same
 * from the Instances. A node that becomes the owner reads the pool's slices and writes them with
 * the next generation; one that stops being the owner stops writing. An owner that closes leaves
 * the pool to its successor (deletes it when no other node sees any of the devices).
 *
 * <p>Any change to a pool's devices rewrites its slices with the next generation (DRA's rule: every
 * slice of a pool carries the pool's current generation); an unchanged pool is not written. An
 * emptied pool's slices are deleted, and so are all of this node's slices when the publisher
 * closes. Creates a DeviceClass {@link DraNames#deviceClass} per Configuration when it is missing
 * (never deletes one: other nodes may use it).
 *
 * <p>Discovery and store events only mark a Configuration dirty; one thread recomputes dirty pools
 * after {@code debounce}, so a burst of changes costs one write per slice. A failed write is
 * retried with backoff. The pools' devices come from {@link DesiredPools}, their writing from
 * {@link PoolWriter}.
 */
public final class ResourceSlicePublisher implements InstanceStore.Listener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ResourceSlicePublisher.class);

  /** DRA's limit on the devices of one ResourceSlice. */
  public static final int MAX_DEVICES_PER_SLICE = 128;

  /** The label on every slice jakri writes. */
  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";

  public static final String MANAGER = "jakri-agent";

  /** The label naming a slice's Configuration. */
  public static final String CONFIGURATION_LABEL = "akri.sh/configuration";

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private final String node;
  private final InstanceStore store;
  private final Supplier<List<LocalDevice>> locals;
  private final ScheduledExecutorService executor;
  private final Duration debounce;

  private final Set<String> dirty = ConcurrentHashMap.newKeySet();
  private final Map<String, String> configurationOfInstance = new ConcurrentHashMap<>();
  private final DesiredPools pools;
  // Touched only on the executor's thread (but for writes()).
  private final PoolWriter writer;
  private final Set<String> warned = new HashSet<>();
  private boolean scheduled;
  private Duration backoff = Duration.ZERO;
  private volatile boolean closed;
  // No pass before the slices a previous run left are known: a pool rewritten from generation 1
  // beside leftovers of a higher generation would be ignored by the scheduler.
  private volatile boolean started;

  public ResourceSlicePublisher(
      KubernetesClient client,
      String node,
      InstanceStore store,
      Supplier<List<LocalDevice>> locals,
      ScheduledExecutorService executor,
      Duration debounce) {
    this.node = node;
    this.store = store;
    this.locals = locals;
    this.executor = executor;
    this.debounce = debounce;
    this.pools = new DesiredPools(node);
    this.writer = new PoolWriter(client, node);
  }

  /** Learns the slices a previous run of this node left and schedules a full pass. */
  public void start() {
    executor.execute(
        () -> {
          try {
            for (ResourceSlice s : writer.all()) {
              String pool = s.getSpec().getPool().getName();
              String cfg = s.getMetadata().getLabels().getOrDefault(CONFIGURATION_LABEL, "");
              if (!node.equals(s.getSpec().getNodeName())) {
                if (pool.equals(DraNames.sharedPool(cfg))) {
                  dirty.add(cfg); // its owner (this node, maybe) takes it over
                }
                continue;
              }
              PoolWriter.Pool known = writer.published(pool);
              long generation =
                  Objects.requireNonNullElse(s.getSpec().getPool().getGeneration(), 0L);
              if (known == null || known.generation() < generation) {
                // Content unknown: the next pass rewrites or deletes it.
                writer.learn(pool, PoolWriter.Pool.unknown(cfg, generation, false));
              }
              dirty.add(cfg);
            }
          } catch (KubernetesClientException e) {
            LOG.warn("cannot list this node's ResourceSlices: {}", e.getMessage());
          }
          locals.get().forEach(d -> dirty.add(d.configuration().name()));
          started = true;
          schedule(Duration.ZERO);
        });
  }

  /** API writes (creates, updates, deletes of slices and classes) made so far. */
  public long writes() {
    return writer.writes();
  }

  /**
   * A device's state on this node changed because of a snapshot or the offline grace ending (the
   * agent's own Instance bookkeeping reaches this through the store instead).
   */
  public void deviceChanged(DeviceChange change) {
    if (!(change instanceof DeviceChange.OfDevice c) || !change.kind().reported()) {
      return;
    }
    LocalDevice device = c.device();
    configurationOfInstance.put(device.instanceName(), device.configuration().name());
    markDirty(device.configuration().name());
  }

  @Override
  public void changed(Instance instance) {
    configurationOfInstance.put(instance.name(), instance.configurationName());
    markDirty(instance.configurationName());
  }

  @Override
  public void deleted(String name) {
    String cfg = configurationOfInstance.get(name);
    if (cfg != null) {
      markDirty(cfg);
    }
  }

  private void markDirty(String configuration) {
    if (closed || !dirty.add(configuration) || !started) {
      return; // before start: kept in dirty for start's first pass
    }
    synchronized (this) {
      if (!scheduled) {
        schedule(debounce);
      }
    }
  }

  private synchronized void schedule(Duration delay) {
    if (closed) {
      return;
    }
    scheduled = true;
    try {
      executor.schedule(this::pass, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      scheduled = false; // shutting down
    }
  }

  /** Recomputes and writes every dirty pool; on the executor's thread. */
  private void pass() {
    synchronized (this) {
      scheduled = false;
    }
    if (closed) {
      return;
    }
    List<String> work = new ArrayList<>(dirty);
    dirty.removeAll(work);
    Map<String, List<LocalDevice>> byConfiguration = new TreeMap<>();
    for (LocalDevice d : locals.get()) {
      byConfiguration.computeIfAbsent(d.configuration().name(), k -> new ArrayList<>()).add(d);
    }
    boolean failed = false;
    for (String cfg : work) {
      try {
        sync(cfg, byConfiguration.getOrDefault(cfg, List.of()));
      } catch (StoreException | RuntimeException e) {
        failed = true;
        dirty.add(cfg);
        LOG.warn(
            "ResourceSlices of Configuration {} on node {} not written, retrying: {}",
            cfg,
            node,
            e.getMessage());
      }
    }
    // Pools of Configurations nothing here reports any more (also those a previous run left).
    for (Map.Entry<String, PoolWriter.Pool> e : writer.published().entrySet()) {
      // (A shared pool follows its Instances' events instead.)
      if (!e.getValue().shared()
          && !byConfiguration.containsKey(e.getValue().configuration())
          && !work.contains(e.getValue().configuration())) {
        dirty.add(e.getValue().configuration());
      }
    }
    if (failed) {
      backoff =
          backoff.isZero()
              ? Duration.ofSeconds(1)
              : backoff.multipliedBy(2).compareTo(MAX_BACKOFF) > 0
                  ? MAX_BACKOFF
                  : backoff.multipliedBy(2);
      schedule(backoff);
    } else {
      backoff = Duration.ZERO;
      if (!dirty.isEmpty()) {
        schedule(debounce);
      }
    }
  }

  private void sync(String configuration, List<LocalDevice> devices) throws StoreException {
    syncNodePool(configuration, devices);
    syncSharedPool(configuration, devices);
  }

  /** The pool of the devices only this node sees. */
  private void syncNodePool(String configuration, List<LocalDevice> devices) throws StoreException {
    String pool = DraNames.pool(node, configuration);
    DesiredPools.Desired desired = pools.nodePool(configuration, devices, store::get);
    warn(configuration, desired.problems());
    writer.write(configuration, pool, false, writer.published(pool), desired.devices());
  }

  private void warn(String configuration, List<String> problems) {
    for (String p : new LinkedHashSet<>(problems)) {
      if (warned.add(configuration + "\n" + p)) {
        LOG.warn("Configuration {}: ResourceSlice attribute: {}", configuration, p);
      }
    }
  }

  /**
   * The pool of the Configuration's shared devices, written by its owner only ({@link
   * DesiredPools#ownerOf}).
   */
  private void syncSharedPool(String configuration, List<LocalDevice> devices)
      throws StoreException {
    String pool = DraNames.sharedPool(configuration);
    List<Instance> shared = sharedInstances(configuration);
    PoolWriter.Pool before = writer.published(pool);
    if (shared.isEmpty()) {
      if (before != null) {
        writer.deletePool(pool);
        LOG.info("pool {}: no shared devices left, ResourceSlices deleted", pool);
      }
      return;
    }
    String owner = DesiredPools.ownerOf(shared);
    if (!node.equals(owner)) {
      if (before != null) {
        writer.forget(pool);
        LOG.info("pool {}: node {} publishes it from now on, node {} stops", pool, owner, node);
      }
      return;
    }
    Optional<DesiredPools.Desired> desired = pools.sharedPool(configuration, shared, devices);
    if (desired.isEmpty()) {
      // No device of it here any more (the handler is unknown): until this node leaves the
      // Instances' nodes, the pool stays as last written.
      return;
    }
    warn(configuration, desired.get().problems());
    if (before == null) {
      // Taking the pool over (or a previous run's): its next generation follows what is there.
      long generation = -1;
      for (ResourceSlice s : writer.poolSlices(pool)) {
        generation =
            Math.max(
                generation, Objects.requireNonNullElse(s.getSpec().getPool().getGeneration(), 0L));
      }
      if (generation >= 0) {
        before = PoolWriter.Pool.unknown(configuration, generation, true);
        LOG.info("pool {}: node {} takes it over from generation {}", pool, node, generation);
      }
    }
    writer.write(configuration, pool, true, before, desired.get().devices());
  }

  /** The Configuration's shared Instances that some node sees, by name. */
  private List<Instance> sharedInstances(String configuration) throws StoreException {
    return DesiredPools.sharedInstances(configuration, store.list());
  }

  /** The CEL selector of a Configuration's DeviceClass. */
  public static String selector(String configuration) {
    return Slices.selector(configuration);
  }

  /** The pool that holds a Configuration's devices on this node. */
  public String poolOf(String configuration) {
    return DraNames.pool(node, configuration);
  }

  /** The pool that holds a Configuration's shared devices (whichever node writes it). */
  public String sharedPoolOf(String configuration) {
    return DraNames.sharedPool(configuration);
  }

  /**
   * Stops writing and deletes every ResourceSlice of this node that jakri wrote, and the shared
   * pools it wrote that no other node sees a device of; a shared pool another node sees is left to
   * that node, which takes it over once this node leaves the Instances' {@code nodes} (run on the
   * caller's thread, after the executor stopped).
   */
  @Override
  public void close() {
    closed = true;
    try {
      int n = 0;
      for (ResourceSlice s : writer.ours()) {
        writer.delete(s);
        n++;
      }
      for (Map.Entry<String, PoolWriter.Pool> e : writer.published().entrySet()) {
        if (!e.getValue().shared()) {
          continue;
        }
        Set<String> others = new TreeSet<>();
        try {
          sharedInstances(e.getValue().configuration()).forEach(i -> others.addAll(i.nodes()));
        } catch (StoreException ex) {
          LOG.warn("pool {}: Instances not readable, left as is: {}", e.getKey(), ex.getMessage());
          continue;
        }
        others.remove(node);
        if (others.isEmpty()) {
          for (ResourceSlice s : writer.poolSlices(e.getKey())) {
            writer.delete(s);
            n++;
          }
        } else {
          LOG.info("pool {}: left to the other nodes that see its devices {}", e.getKey(), others);
        }
      }
      if (n > 0) {
        LOG.info("node {}: {} ResourceSlices deleted (DRA no longer served)", node, n);
      }
    } catch (KubernetesClientException e) {
      LOG.warn("node {}: ResourceSlices not deleted: {}", node, e.getMessage());
    }
  }
}
