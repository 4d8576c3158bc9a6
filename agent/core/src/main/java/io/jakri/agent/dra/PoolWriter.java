package io.jakri.agent.dra;

import static io.jakri.agent.dra.ResourceSlicePublisher.MANAGED_BY;
import static io.jakri.agent.dra.ResourceSlicePublisher.MANAGER;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.NonDeletingOperation;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes one node's pools through the API and remembers what it last wrote for each: a pool whose
 * devices changed is rewritten with the next generation, one left without devices is deleted.
 * Creates a Configuration's DeviceClass when it is missing. Used on one thread.
 */
final class PoolWriter {

  // The publisher's logger: these lines were always its.
  private static final Logger LOG = LoggerFactory.getLogger(ResourceSlicePublisher.class);

  /**
   * What was last written for one pool: {@code devices} null and {@code slices} {@link
   * Integer#MAX_VALUE} when a previous run (or another node) wrote it and its content is unknown.
   */
  record Pool(
      String configuration, long generation, List<PoolDevice> devices, int slices, boolean shared) {

    /** A pool written before, of unknown content, at {@code generation}. */
    static Pool unknown(String configuration, long generation, boolean shared) {
      return new Pool(configuration, generation, null, Integer.MAX_VALUE, shared);
    }
  }

  private final KubernetesClient client;
  private final String node;
  private final Map<String, Pool> published = new HashMap<>();
  private final Set<String> classesKnown = new HashSet<>();
  private final AtomicLong writes = new AtomicLong();

  PoolWriter(KubernetesClient client, String node) {
    this.client = client;
    this.node = node;
  }

  /** API writes (creates, updates, deletes of slices and classes) made so far; any thread. */
  long writes() {
    return writes.get();
  }

  /** What was last written for {@code pool}; null when nothing. */
  Pool published(String pool) {
    return published.get(pool);
  }

  /** Every pool written, by name (a copy). */
  Map<String, Pool> published() {
    return new HashMap<>(published);
  }

  /** Takes note that {@code pool} is as {@code known} (a previous run's, content unknown). */
  void learn(String pool, Pool known) {
    published.put(pool, known);
  }

  /** Stops writing {@code pool} (another node writes it) without deleting its slices. */
  void forget(String pool) {
    published.remove(pool);
  }

  /** Writes a pool's slices when its devices changed (deletes them when it has none). */
  void write(
      String configuration, String pool, boolean shared, Pool before, List<PoolDevice> desired) {
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
    int count = Slices.count(desired.size());
    for (int i = 0; i < count; i++) {
      ResourceSlice slice =
          Slices.slice(
              node, configuration, pool, shared, i, generation, count, Slices.part(desired, i));
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

  /** Deletes every slice of a pool this node wrote and forgets it. */
  void deletePool(String pool) {
    Pool before = published.get(pool);
    if (before != null) {
      deleteFrom(pool, 0, before.slices());
      published.remove(pool);
    }
  }

  /** Deletes slices {@code from .. to-1} of a pool (unknown count: those listed). */
  private void deleteFrom(String pool, int from, int to) {
    if (to == Integer.MAX_VALUE) {
      for (ResourceSlice s : poolSlices(pool)) {
        if (Slices.indexOf(s.getMetadata().getName()) >= from) {
          delete(s);
        }
      }
      return;
    }
    for (int i = from; i < to; i++) {
      client.resources(ResourceSlice.class).withName(DraNames.slice(pool, i)).delete();
      writes.incrementAndGet();
    }
  }

  /** Deletes one slice. */
  void delete(ResourceSlice slice) {
    client.resource(slice).delete();
    writes.incrementAndGet();
  }

  /** This node's slices that jakri wrote (not the shared pools'). */
  List<ResourceSlice> ours() {
    return all().stream().filter(s -> node.equals(s.getSpec().getNodeName())).toList();
  }

  /** A pool's slices, whichever node wrote them. */
  List<ResourceSlice> poolSlices(String pool) {
    return all().stream()
        .filter(s -> s.getSpec().getPool() != null)
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  /** Every slice of driver akri.sh that jakri wrote. */
  List<ResourceSlice> all() {
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
      try {
        client.resources(DeviceClass.class).resource(Slices.deviceClass(configuration)).create();
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
}
