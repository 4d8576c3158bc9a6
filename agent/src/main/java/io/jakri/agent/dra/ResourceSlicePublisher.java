package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.discovery.LocalDevice;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Publishes this node's devices as {@code resource.k8s.io/v1} ResourceSlices of driver {@code
 * akri.sh}: one pool per Configuration ({@link DraNames#pool}), one device per slot that is free or
 * held for a ResourceClaim on this node (a slot held through a device-plugin resource or by another
 * node is left out, so the scheduler cannot allocate it twice), of devices online here; at most
 * {@value #MAX_DEVICES_PER_SLICE} devices per slice. Any change to a pool's devices rewrites its
 * slices with the next generation (DRA's rule: every slice of a pool carries the pool's current
 * generation); an unchanged pool is not written. An emptied pool's slices are deleted, and so are
 * all of this node's slices when the publisher closes. Creates a DeviceClass {@link
 * DraNames#deviceClass} per Configuration when it is missing (never deletes one: other nodes may
 * use it).
 *
 * <p>Discovery and store events only mark a Configuration dirty; one thread recomputes dirty pools
 * after {@code debounce}, so a burst of changes costs one write per slice. A failed write is
 * retried with backoff.
 */
public final class ResourceSlicePublisher
    implements DiscoveryManager.Listener, InstanceStore.Listener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(ResourceSlicePublisher.class);

  /** DRA's limit on the devices of one ResourceSlice. */
  public static final int MAX_DEVICES_PER_SLICE = 128;

  /** The label on every slice jakri writes. */
  public static final String MANAGED_BY = "app.kubernetes.io/managed-by";

  public static final String MANAGER = "jakri-agent";

  /** The label naming a slice's Configuration. */
  public static final String CONFIGURATION_LABEL = "akri.sh/configuration";

  private static final Duration MAX_BACKOFF = Duration.ofSeconds(30);

  private final KubernetesClient client;
  private final String node;
  private final InstanceStore store;
  private final Supplier<List<LocalDevice>> locals;
  private final ScheduledExecutorService executor;
  private final Duration debounce;

  private final Set<String> dirty = ConcurrentHashMap.newKeySet();
  private final Map<String, String> configurationOfInstance = new ConcurrentHashMap<>();
  // Touched only on the executor's thread.
  private final Map<String, Pool> published = new HashMap<>();
  private final Set<String> classesKnown = new java.util.HashSet<>();
  private final Set<String> warned = new java.util.HashSet<>();
  private boolean scheduled;
  private Duration backoff = Duration.ZERO;
  private volatile boolean closed;
  // No pass before the slices a previous run left are known: a pool rewritten from generation 1
  // beside leftovers of a higher generation would be ignored by the scheduler.
  private volatile boolean started;
  private final AtomicLong writes = new AtomicLong();

  /** What this publisher last wrote for one pool. */
  private record Pool(String configuration, long generation, List<Entry> devices, int slices) {}

  /** One published device: its DRA name, its slot and its attributes. */
  record Entry(
      String name,
      String instance,
      String slot,
      Map<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute> attributes) {}

  public ResourceSlicePublisher(
      KubernetesClient client,
      String node,
      InstanceStore store,
      Supplier<List<LocalDevice>> locals,
      ScheduledExecutorService executor,
      Duration debounce) {
    this.client = client;
    this.node = node;
    this.store = store;
    this.locals = locals;
    this.executor = executor;
    this.debounce = debounce;
  }

  /** Learns the slices a previous run of this node left and schedules a full pass. */
  public void start() {
    executor.execute(
        () -> {
          try {
            for (ResourceSlice s : ours()) {
              String pool = s.getSpec().getPool().getName();
              String cfg = s.getMetadata().getLabels().getOrDefault(CONFIGURATION_LABEL, "");
              Pool known = published.get(pool);
              long generation =
                  Objects.requireNonNullElse(s.getSpec().getPool().getGeneration(), 0L);
              if (known == null || known.generation() < generation) {
                // Content unknown: the next pass rewrites or deletes it.
                published.put(pool, new Pool(cfg, generation, null, Integer.MAX_VALUE));
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
    return writes.get();
  }

  @Override
  public void deviceChanged(
      String handler, LocalDevice device, DiscoveryManager.DeviceChange change, long nanos) {
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
    for (Map.Entry<String, Pool> e : new ArrayList<>(published.entrySet())) {
      if (!byConfiguration.containsKey(e.getValue().configuration())
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
    String pool = DraNames.pool(node, configuration);
    List<Entry> desired = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    List<LocalDevice> sorted = new ArrayList<>(devices);
    sorted.sort(java.util.Comparator.comparing(LocalDevice::instanceName));
    for (LocalDevice d : sorted) {
      if (!d.online()) {
        continue;
      }
      Optional<Instance> stored = store.get(d.instanceName());
      if (stored.isEmpty()) {
        continue; // published once its Instance is stored
      }
      Instance instance = stored.get();
      for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
        SlotUsage usage = slot.getValue();
        if (!(usage instanceof SlotUsage.Free
            || usage instanceof SlotUsage.ClaimUse c && c.heldBy(node))) {
          continue;
        }
        DeviceAttributes attributes =
            DeviceAttributes.of(
                configuration,
                instance.name(),
                d.configuration().handlerName(),
                InstanceNames.slotIndex(slot.getKey()),
                instance.shared(),
                d.device().properties());
        problems.addAll(attributes.problems());
        desired.add(
            new Entry(
                DraNames.device(slot.getKey()),
                instance.name(),
                slot.getKey(),
                attributes.attributes()));
      }
    }
    for (String p : new java.util.LinkedHashSet<>(problems)) {
      if (warned.add(configuration + "\n" + p)) {
        LOG.warn("Configuration {}: ResourceSlice attribute: {}", configuration, p);
      }
    }
    Pool before = published.get(pool);
    if (before != null && desired.equals(before.devices())) {
      return;
    }
    if (desired.isEmpty()) {
      if (before != null) {
        deleteFrom(pool, 0, before.slices());
        published.remove(pool);
        LOG.info("pool {}: no devices left, ResourceSlices deleted", pool);
      }
      return;
    }
    ensureDeviceClass(configuration);
    long generation = before == null ? 1 : before.generation() + 1;
    int count = (desired.size() + MAX_DEVICES_PER_SLICE - 1) / MAX_DEVICES_PER_SLICE;
    for (int i = 0; i < count; i++) {
      List<Entry> part =
          desired.subList(
              i * MAX_DEVICES_PER_SLICE, Math.min(desired.size(), (i + 1) * MAX_DEVICES_PER_SLICE));
      ResourceSlice slice = slice(configuration, pool, i, generation, count, part);
      client.resources(ResourceSlice.class).resource(slice).createOr(NonDeletingOperation::update);
      writes.incrementAndGet();
    }
    if (before != null) {
      deleteFrom(pool, count, before.slices());
    }
    published.put(pool, new Pool(configuration, generation, List.copyOf(desired), count));
    LOG.debug(
        "pool {}: {} devices in {} ResourceSlices, generation {}",
        pool,
        desired.size(),
        count,
        generation);
  }

  private ResourceSlice slice(
      String configuration, String pool, int index, long generation, int count, List<Entry> part) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(MANAGED_BY, MANAGER);
    if (configuration.length() <= 63) {
      labels.put(CONFIGURATION_LABEL, configuration);
    }
    return new ResourceSliceBuilder()
        .withMetadata(
            new ObjectMetaBuilder()
                .withName(DraNames.slice(pool, index))
                .withLabels(labels)
                .build())
        .withNewSpec()
        .withDriver(DraNames.DRIVER)
        .withNodeName(node)
        .withNewPool()
        .withName(pool)
        .withGeneration(generation)
        .withResourceSliceCount((long) count)
        .endPool()
        .withDevices(
            part.stream()
                .map(
                    e ->
                        new DeviceBuilder()
                            .withName(e.name())
                            .withAttributes(e.attributes())
                            .build())
                .toList())
        .endSpec()
        .build();
  }

  /** Deletes slices {@code from .. to-1} of a pool (unknown count: those listed). */
  private void deleteFrom(String pool, int from, int to) {
    if (to == Integer.MAX_VALUE) {
      for (ResourceSlice s : ours()) {
        if (pool.equals(s.getSpec().getPool().getName())
            && indexOf(s.getMetadata().getName(), pool) >= from) {
          client.resource(s).delete();
          writes.incrementAndGet();
        }
      }
      return;
    }
    for (int i = from; i < to; i++) {
      client.resources(ResourceSlice.class).withName(DraNames.slice(pool, i)).delete();
      writes.incrementAndGet();
    }
  }

  private static int indexOf(String sliceName, String pool) {
    int dash = sliceName.lastIndexOf('-');
    try {
      return Integer.parseInt(sliceName.substring(dash + 1));
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE;
    }
  }

  /** This node's slices that jakri wrote. */
  private List<ResourceSlice> ours() {
    return client
        .resources(ResourceSlice.class)
        .withLabel(MANAGED_BY, MANAGER)
        .list()
        .getItems()
        .stream()
        .filter(
            s ->
                s.getSpec() != null
                    && DraNames.DRIVER.equals(s.getSpec().getDriver())
                    && node.equals(s.getSpec().getNodeName()))
        .toList();
  }

  private void ensureDeviceClass(String configuration) {
    String name = DraNames.deviceClass(configuration);
    if (classesKnown.contains(name)) {
      return;
    }
    if (client.resources(DeviceClass.class).withName(name).get() == null) {
      DeviceClass cls =
          new DeviceClassBuilder()
              .withMetadata(
                  new ObjectMetaBuilder()
                      .withName(name)
                      .withLabels(Map.of(MANAGED_BY, MANAGER))
                      .build())
              .withNewSpec()
              .addNewSelector()
              .withNewCel()
              .withExpression(selector(configuration))
              .endCel()
              .endSelector()
              .endSpec()
              .build();
      try {
        client.resources(DeviceClass.class).resource(cls).create();
        writes.incrementAndGet();
        LOG.info("DeviceClass {} created for Configuration {}", name, configuration);
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409) {
          throw e;
        }
      }
    }
    classesKnown.add(name);
  }

  /** The CEL selector of a Configuration's DeviceClass. */
  public static String selector(String configuration) {
    return "device.driver == \""
        + DraNames.DRIVER
        + "\" && device.attributes[\""
        + DraNames.DOMAIN
        + "\"].configuration == \""
        + configuration
        + "\"";
  }

  /** The pool that holds a Configuration's devices on this node. */
  public String poolOf(String configuration) {
    return DraNames.pool(node, configuration);
  }

  /**
   * Stops writing and deletes every ResourceSlice of this node that jakri wrote (run on the
   * caller's thread, after the executor stopped).
   */
  @Override
  public void close() {
    closed = true;
    try {
      int n = 0;
      for (ResourceSlice s : ours()) {
        client.resource(s).delete();
        writes.incrementAndGet();
        n++;
      }
      if (n > 0) {
        LOG.info("node {}: {} ResourceSlices deleted (DRA no longer served)", node, n);
      }
    } catch (KubernetesClientException e) {
      LOG.warn("node {}: ResourceSlices not deleted: {}", node, e.getMessage());
    }
  }
}
