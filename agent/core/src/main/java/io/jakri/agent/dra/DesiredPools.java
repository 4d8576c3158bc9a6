package io.jakri.agent.dra;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;

/**
 * The devices one node publishes in a Configuration's pools, computed from its devices and the
 * Instances (no API calls, no state): the node's own pool holds a device per slot that is free or
 * held for a ResourceClaim on this node, of unshared devices online here; the shared pool holds a
 * device per slot that is free or held for a ResourceClaim on any node, of the Configuration's
 * shared Instances, with the nodes that see each.
 */
final class DesiredPools {

  /** A pool's devices in slice order, and the attribute problems met computing them. */
  record Desired(List<PoolDevice> devices, List<String> problems) {}

  /** Reads one stored Instance. */
  @FunctionalInterface
  interface Instances {
    Optional<Instance> get(String name) throws StoreException;
  }

  private final String node;

  DesiredPools(String node) {
    this.node = node;
  }

  /** The devices of the pool of those of {@code devices} only this node sees. */
  Desired nodePool(String configuration, List<LocalDevice> devices, Instances store)
      throws StoreException {
    List<PoolDevice> desired = new ArrayList<>();
    List<String> problems = new ArrayList<>();
    List<LocalDevice> sorted = new ArrayList<>(devices);
    sorted.sort(Comparator.comparing(LocalDevice::instanceName));
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
            new PoolDevice(
                DraNames.device(slot.getKey()),
                instance.name(),
                slot.getKey(),
                attributes.attributes(),
                List.of()));
      }
    }
    return new Desired(desired, problems);
  }

  /**
   * The devices of a Configuration's shared pool, from its {@code shared} Instances ({@link
   * #sharedInstances}) and this node's {@code devices} of it; empty when this node has no device of
   * it any more (the handler is unknown: the pool stays as last written).
   */
  Optional<Desired> sharedPool(
      String configuration, List<Instance> shared, List<LocalDevice> devices) {
    Map<String, LocalDevice> mine = new HashMap<>();
    devices.forEach(d -> mine.put(d.instanceName(), d));
    if (mine.isEmpty()) {
      return Optional.empty();
    }
    LocalDevice any = mine.values().iterator().next();
    String handler = any.configuration().handlerName();
    List<PoolDevice> desired = new ArrayList<>();
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
            new PoolDevice(
                DraNames.device(slot.getKey()),
                instance.name(),
                slot.getKey(),
                attributes.attributes(),
                List.copyOf(nodes)));
      }
    }
    return Optional.of(new Desired(desired, problems));
  }

  /** The Configuration's shared Instances that some node sees, by name. */
  static List<Instance> sharedInstances(String configuration, Collection<Instance> all) {
    return all.stream()
        .filter(
            i -> i.shared() && configuration.equals(i.configurationName()) && !i.nodes().isEmpty())
        .sorted(Comparator.comparing(Instance::name))
        .toList();
  }

  /**
   * The node that writes a Configuration's shared pool: the first, in name order, of the nodes of
   * its shared Instances.
   */
  static String ownerOf(List<Instance> shared) {
    return shared.stream().map(i -> i.nodes().first()).min(String::compareTo).orElse("");
  }
}
