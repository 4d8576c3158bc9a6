package io.jakri.agent.allocation;

import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.deviceplugin.ResourceBackend;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.model.EnvContract;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * A class resource (DESIGN §4): {@code akri.sh/<configuration>} or a handler's named class such as
 * {@code example.com/widget}. Its devices are the slots of every member Instance that this node may
 * grant through this class (free, or held so by this node's own claim); the device id is the slot
 * id, and a claim records {@code C:<slot>:<node>}.
 */
final class ClassResource implements ResourceBackend {

  private final Sources sources;
  private final String resourceName;

  ClassResource(Sources sources, String resourceName) {
    this.sources = sources;
    this.resourceName = resourceName;
  }

  @Override
  public String resourceName() {
    return resourceName;
  }

  @Override
  public String socketStem() {
    return "jakri-class-" + resourceName.replace('/', '_');
  }

  @Override
  public List<Device> devices() {
    List<Device> devices = new ArrayList<>();
    for (String member : sources.classes().of(resourceName)) {
      Optional<Instance> stored = sources.slots().stored(member);
      Optional<LocalDevice> local = sources.devices().get(member);
      if (stored.isEmpty() || local.isEmpty()) {
        continue;
      }
      for (Map.Entry<String, SlotUsage> slot : stored.get().deviceUsage().entrySet()) {
        SlotUsage usage = slot.getValue();
        if (sources.slots().grantable(member, slot.getKey(), usage, classUse(slot.getKey()))) {
          devices.add(
              Device.newBuilder()
                  .setID(slot.getKey())
                  .setHealth(
                      local.get().online() ? InstanceResource.HEALTHY : InstanceResource.UNHEALTHY)
                  .build());
        }
      }
    }
    return devices;
  }

  private SlotUsage classUse(String slot) {
    return new SlotUsage.ClassUse(slot, sources.node());
  }

  /** Prefers spreading over distinct Instances (two widgets, not two slots of one widget). */
  @Override
  public List<String> preferredAllocation(
      List<String> available, List<String> mustInclude, int size) {
    LinkedHashSet<String> chosen = new LinkedHashSet<>(mustInclude);
    Map<String, List<String>> byInstance = new TreeMap<>();
    for (String slot : available) {
      byInstance.computeIfAbsent(instanceOf(slot), i -> new ArrayList<>()).add(slot);
    }
    Set<String> used = new java.util.HashSet<>();
    for (String slot : chosen) {
      used.add(instanceOf(slot));
    }
    // Round-robin over Instances, each in a node-specific slot order, Instances not yet used first.
    Map<String, List<String>> queues = new LinkedHashMap<>();
    byInstance.forEach((i, slots) -> queues.put(i, SlotClaims.nodeOrder(sources.node(), slots)));
    while (chosen.size() < size) {
      boolean progress = false;
      for (boolean fresh : new boolean[] {true, false}) {
        for (Map.Entry<String, List<String>> q : queues.entrySet()) {
          if (chosen.size() >= size) {
            break;
          }
          if (used.contains(q.getKey()) == fresh || q.getValue().isEmpty()) {
            continue;
          }
          String slot = q.getValue().remove(0);
          if (chosen.add(slot)) {
            used.add(q.getKey());
            progress = true;
          }
        }
      }
      if (!progress) {
        break;
      }
    }
    return new ArrayList<>(chosen);
  }

  @Override
  public ContainerAllocateResponse allocate(List<String> deviceIds) throws AllocationException {
    if (deviceIds.isEmpty()) {
      throw new AllocationException(
          AllocationException.Reason.INVALID_REQUEST, "no device ids in the request");
    }
    List<String> sorted = new ArrayList<>(new LinkedHashSet<>(deviceIds));
    sorted.sort(java.util.Comparator.naturalOrder());
    Map<String, List<String>> byInstance = new TreeMap<>();
    for (String slot : sorted) {
      String instance = instanceOf(slot);
      if (!sources.classes().of(resourceName).contains(instance)) {
        throw new AllocationException(
            AllocationException.Reason.UNKNOWN_DEVICE,
            "device " + slot + " is not part of " + resourceName + " on this node");
      }
      LocalDevice local = sources.devices().get(instance).orElseThrow();
      if (!local.online()) {
        throw new AllocationException(
            AllocationException.Reason.UNHEALTHY, "device " + slot + " is offline");
      }
      byInstance.computeIfAbsent(instance, i -> new ArrayList<>()).add(slot);
    }
    Map<String, Instance> claimed = new LinkedHashMap<>();
    try {
      for (Map.Entry<String, List<String>> e : byInstance.entrySet()) {
        claimed.put(e.getKey(), sources.slots().claim(e.getKey(), e.getValue(), this::classUse));
      }
    } catch (AllocationException e) {
      claimed.forEach((instance, i) -> sources.slots().release(instance, byInstance.get(instance)));
      throw e;
    }
    // Env: devices ordered by slot id, each with its Instance's merged properties.
    List<Map<String, String>> devices = new ArrayList<>();
    List<String> orderedSlots = new ArrayList<>(sorted);
    orderedSlots.sort(
        java.util.Comparator.comparing(ClassResource::instanceOf)
            .thenComparingInt(InstanceNames::slotIndex));
    Map<String, String> env = new LinkedHashMap<>();
    ContainerAllocateResponse.Builder response = ContainerAllocateResponse.newBuilder();
    Set<String> mounted = new java.util.HashSet<>();
    boolean defaultClass = false;
    for (String slot : orderedSlots) {
      LocalDevice local = sources.devices().get(instanceOf(slot)).orElseThrow();
      devices.add(
          EnvContract.mergedProperties(
              local.device().properties(), local.configuration().brokerProperties()));
      defaultClass |= local.inDefaultClass();
      if (mounted.add(local.instanceName())) {
        Mounts.addDevice(response, local);
        // Each device's own env once, before the contract's names (which win on a clash).
        env.putAll(EnvContract.deviceEnv(local.device().env()));
      }
    }
    if (defaultClass) {
      // Akri's brokers read K and K_<H> for configuration-level resources too.
      for (String instance : byInstance.keySet()) {
        LocalDevice local = sources.devices().get(instance).orElseThrow();
        env.putAll(
            EnvContract.forInstance(
                claimed.get(instance).hash(),
                EnvContract.mergedProperties(
                    local.device().properties(), local.configuration().brokerProperties())));
      }
    }
    env.putAll(EnvContract.forClass(resourceName, devices));
    sources.addCdiDevices(response, orderedSlots);
    return response.putAllEnvs(env).build();
  }

  /** The Instance a slot id belongs to: the id without its {@code -<n>} suffix. */
  static String instanceOf(String slot) {
    int dash = slot.lastIndexOf('-');
    return dash < 0 ? slot : slot.substring(0, dash);
  }
}
