package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
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
  private record Pool(
      String configuration, long generation, List<Entry> devices, int slices, boolean shared) {}

  /**
   * One published device: its DRA name, its slot, its attributes and (shared pool only) the nodes
   * of its node selector.
   */
  record Entry(
      String name,
      String instance,
      String slot,
      Map<String, io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute> attributes,
      List<String> nodes) {}

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
            for (ResourceSlice s : all()) {
              String pool = s.getSpec().getPool().getName();
              String cfg = s.getMetadata().getLabels().getOrDefault(CONFIGURATION_LABEL, "");
              if (!node.equals(s.getSpec().getNodeName())) {
                if (pool.equals(DraNames.sharedPool(cfg))) {
                  dirty.add(cfg); // its owner (this node, maybe) takes it over
                }
                continue;
              }
              Pool known = published.get(pool);
              long generation =
                  Objects.requireNonNullElse(s.getSpec().getPool().getGeneration(), 0L);
              if (known == null || known.generation() < generation) {
                // Content unknown: the next pass rewrites or deletes it.
                published.put(pool, new Pool(cfg, generation, null, Integer.MAX_VALUE, false));
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
      if (instance.shared()) {
        continue; // in the Configuration's shared pool
      }
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
                attributes.attributes(),
                List.of()));
      }
    }
    warn(configuration, problems);
    write(configuration, pool, false, published.get(pool), desired);
  }

  private void warn(String configuration, List<String> problems) {
    for (String p : new java.util.LinkedHashSet<>(problems)) {
      if (warned.add(configuration + "\n" + p)) {
        LOG.warn("Configuration {}: ResourceSlice attribute: {}", configuration, p);
      }
    }
  }

  /**
   * The pool of the Configuration's shared devices, written by its owner only ({@link #ownerOf}).
   */
  private void syncSharedPool(String configuration, List<LocalDevice> devices)
      throws StoreException {
    String pool = DraNames.sharedPool(configuration);
    List<Instance> shared = sharedInstances(configuration);
    Pool before = published.get(pool);
    if (shared.isEmpty()) {
      if (before != null) {
        deleteFrom(pool, 0, before.slices());
        published.remove(pool);
        LOG.info("pool {}: no shared devices left, ResourceSlices deleted", pool);
      }
      return;
    }
    String owner = ownerOf(shared);
    if (!node.equals(owner)) {
      if (before != null) {
        published.remove(pool);
        LOG.info("pool {}: node {} publishes it from now on, node {} stops", pool, owner, node);
      }
      return;
    }
    Map<String, LocalDevice> mine = new HashMap<>();
    devices.forEach(d -> mine.put(d.instanceName(), d));
    if (mine.isEmpty()) {
      // No device of it here any more (the handler is unknown): until this node leaves the
      // Instances' nodes, the pool stays as last written.
      return;
    }
    LocalDevice any = mine.values().iterator().next();
    String handler = any.configuration().handlerName();
    List<Entry> desired = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    for (Instance instance : shared) {
      LocalDevice local = mine.get(instance.name());
      List<String> nodes = new ArrayList<>(instance.nodes());
      if (local != null && !local.online()) {
        nodes.remove(node);
      }
      if (nodes.isEmpty()) {
        continue;
      }
      // The device's properties as discovered here, else as its Instance carries them (without
      // what the Configuration's brokerProperties added).
      Map<String, String> properties;
      if (local != null) {
        properties = local.device().properties();
      } else {
        properties = new TreeMap<>(instance.brokerProperties());
        properties.keySet().removeAll(any.configuration().brokerProperties().keySet());
      }
      for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
        SlotUsage usage = slot.getValue();
        if (!(usage instanceof SlotUsage.Free || usage instanceof SlotUsage.ClaimUse)) {
          continue;
        }
        DeviceAttributes attributes =
            DeviceAttributes.of(
                configuration,
                instance.name(),
                handler,
                InstanceNames.slotIndex(slot.getKey()),
                true,
                properties);
        problems.addAll(attributes.problems());
        desired.add(
            new Entry(
                DraNames.device(slot.getKey()),
                instance.name(),
                slot.getKey(),
                attributes.attributes(),
                List.copyOf(nodes)));
      }
    }
    warn(configuration, problems);
    if (before == null) {
      // Taking the pool over (or a previous run's): its next generation follows what is there.
      long generation = -1;
      for (ResourceSlice s : poolSlices(pool)) {
        generation =
            Math.max(
                generation, Objects.requireNonNullElse(s.getSpec().getPool().getGeneration(), 0L));
      }
      if (generation >= 0) {
        before = new Pool(configuration, generation, null, Integer.MAX_VALUE, true);
        LOG.info("pool {}: node {} takes it over from generation {}", pool, node, generation);
      }
    }
    write(configuration, pool, true, before, desired);
  }

  /** The Configuration's shared Instances that some node sees, by name. */
  private List<Instance> sharedInstances(String configuration) throws StoreException {
    return store.list().stream()
        .filter(
            i -> i.shared() && configuration.equals(i.configurationName()) && !i.nodes().isEmpty())
        .sorted(java.util.Comparator.comparing(Instance::name))
        .toList();
  }

  /**
   * The node that writes a Configuration's shared pool: the first, in name order, of the nodes of
   * its shared Instances.
   */
  static String ownerOf(List<Instance> shared) {
    return shared.stream().map(i -> i.nodes().first()).min(String::compareTo).orElse("");
  }

  /** Writes a pool's slices when its devices changed (deletes them when it has none). */
  private void write(
      String configuration, String pool, boolean shared, Pool before, List<Entry> desired) {
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
      ResourceSlice slice = slice(configuration, pool, shared, i, generation, count, part);
      client.resources(ResourceSlice.class).resource(slice).createOr(NonDeletingOperation::update);
      writes.incrementAndGet();
    }
    if (before != null) {
      deleteFrom(pool, count, before.slices());
    }
    published.put(pool, new Pool(configuration, generation, List.copyOf(desired), count, shared));
    LOG.debug(
        "pool {}: {} devices in {} ResourceSlices, generation {}",
        pool,
        desired.size(),
        count,
        generation);
  }

  private ResourceSlice slice(
      String configuration,
      String pool,
      boolean shared,
      int index,
      long generation,
      int count,
      List<Entry> part) {
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
        .withNodeName(shared ? null : node)
        .withPerDeviceNodeSelection(shared ? Boolean.TRUE : null)
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
                            .withNodeSelector(shared ? nodeSelector(e.nodes()) : null)
                            .build())
                .toList())
        .endSpec()
        .build();
  }

  /** A node selector of one term: the node named one of {@code nodes}. */
  static NodeSelector nodeSelector(List<String> nodes) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchField()
        .withKey("metadata.name")
        .withOperator("In")
        .withValues(nodes)
        .endMatchField()
        .endNodeSelectorTerm()
        .build();
  }

  /** Deletes slices {@code from .. to-1} of a pool (unknown count: those listed). */
  private void deleteFrom(String pool, int from, int to) {
    if (to == Integer.MAX_VALUE) {
      for (ResourceSlice s : poolSlices(pool)) {
        if (indexOf(s.getMetadata().getName(), pool) >= from) {
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

  /** This node's slices that jakri wrote (not the shared pools'). */
  private List<ResourceSlice> ours() {
    return all().stream().filter(s -> node.equals(s.getSpec().getNodeName())).toList();
  }

  /** A pool's slices, whichever node wrote them. */
  private List<ResourceSlice> poolSlices(String pool) {
    return all().stream()
        .filter(s -> s.getSpec().getPool() != null)
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  /** Every slice of driver akri.sh that jakri wrote. */
  private List<ResourceSlice> all() {
    return client
        .resources(ResourceSlice.class)
        .withLabel(MANAGED_BY, MANAGER)
        .list()
        .getItems()
        .stream()
        .filter(s -> s.getSpec() != null && DraNames.DRIVER.equals(s.getSpec().getDriver()))
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
      for (ResourceSlice s : ours()) {
        client.resource(s).delete();
        writes.incrementAndGet();
        n++;
      }
      for (Map.Entry<String, Pool> e : published.entrySet()) {
        if (!e.getValue().shared()) {
          continue;
        }
        Set<String> others = new java.util.TreeSet<>();
        try {
          sharedInstances(e.getValue().configuration()).forEach(i -> others.addAll(i.nodes()));
        } catch (StoreException ex) {
          LOG.warn("pool {}: Instances not readable, left as is: {}", e.getKey(), ex.getMessage());
          continue;
        }
        others.remove(node);
        if (others.isEmpty()) {
          for (ResourceSlice s : poolSlices(e.getKey())) {
            client.resource(s).delete();
            writes.incrementAndGet();
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
