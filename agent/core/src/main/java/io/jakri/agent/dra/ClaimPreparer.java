package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceRequestAllocationResult;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.agent.allocation.SlotClaims;
import io.jakri.agent.cdi.CdiNames;
import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What {@code NodePrepareResources} and {@code NodeUnprepareResources} do, whatever the API
 * version: reads the ResourceClaim, takes its allocated devices of driver {@code akri.sh}, claims
 * their slots in the Instances' {@code deviceUsage} as {@code D:<claim uid>:<node>} (so the
 * device-plugin resources report them Unhealthy on every node, and a slot held there refuses the
 * claim) and answers with their CDI device ids. Preparing again returns the same (idempotent);
 * unpreparing frees the slots this claim holds, and succeeds for a claim it does not know. A
 * problem with one claim is that claim's error, never the call's. A device of this node's pool is
 * accepted, and one of its Configuration's shared pool ({@link DraNames#sharedPool}, whichever node
 * published it) when this node sees it (is among its Instance's {@code nodes}).
 */
public final class ClaimPreparer {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimPreparer.class);

  /** A claim as the kubelet names it. */
  public record ClaimRef(String namespace, String uid, String name) {
    @Override
    public String toString() {
      return namespace + "/" + name + " (uid " + uid + ")";
    }
  }

  /** One prepared device: what the kubelet hands to the runtime. */
  public record PreparedDevice(
      List<String> requestNames, String pool, String device, List<String> cdiDeviceIds) {}

  /** The answer for one claim: its devices, or an error (then the devices are empty). */
  public record Result(List<PreparedDevice> devices, String error) {
    static Result failed(String error) {
      return new Result(List.of(), error);
    }

    public boolean ok() {
      return error.isEmpty();
    }
  }

  private record Slot(LocalDevice device, String slotId) {}

  private final String node;
  private final ClaimReader claims;
  private final LocalDevices devices;
  private final SlotClaims slotClaims;
  private final InstanceStore store;
  // Claim uid -> instance -> slots, as prepared here (unprepare also finds them in the store).
  private final Map<String, Map<String, List<String>>> prepared = new ConcurrentHashMap<>();

  public ClaimPreparer(
      String node,
      ClaimReader claims,
      LocalDevices devices,
      SlotClaims slots,
      InstanceStore store) {
    this.node = node;
    this.claims = claims;
    this.devices = devices;
    this.slotClaims = slots;
    this.store = store;
  }

  /** Prepares one claim. */
  public Result prepare(ClaimRef ref) {
    Result result = prepareOnce(ref);
    if (result.ok()) {
      LOG.info(
          "ResourceClaim {} prepared on node {}: {}",
          ref,
          node,
          result.devices().stream().flatMap(d -> d.cdiDeviceIds().stream()).toList());
    } else {
      LOG.warn("ResourceClaim {} not prepared on node {}: {}", ref, node, result.error());
    }
    return result;
  }

  private Result prepareOnce(ClaimRef ref) {
    if (ref.namespace().isEmpty() || ref.uid().isEmpty() || ref.name().isEmpty()) {
      return Result.failed("the claim's namespace, uid and name are required");
    }
    Optional<String> badName = ClaimReader.problem(ref.namespace(), ref.name());
    if (badName.isPresent()) {
      return Result.failed("ResourceClaim not read: " + badName.get());
    }
    Optional<ResourceClaim> found;
    try {
      found = claims.get(ref.namespace(), ref.name());
    } catch (KubernetesClientException e) {
      return Result.failed(
          "cannot read ResourceClaim "
              + ref.namespace()
              + "/"
              + ref.name()
              + ": "
              + e.getMessage());
    }
    if (found.isEmpty()) {
      return Result.failed("ResourceClaim " + ref.namespace() + "/" + ref.name() + " not found");
    }
    ResourceClaim claim = found.get();
    if (!ref.uid().equals(claim.getMetadata().getUid())) {
      return Result.failed(
          "ResourceClaim "
              + ref.namespace()
              + "/"
              + ref.name()
              + " has uid "
              + claim.getMetadata().getUid()
              + ", not "
              + ref.uid()
              + " (deleted and created again?)");
    }
    if (claim.getStatus() == null
        || claim.getStatus().getAllocation() == null
        || claim.getStatus().getAllocation().getDevices() == null) {
      return Result.failed(
          "ResourceClaim " + ref.namespace() + "/" + ref.name() + " is not allocated");
    }
    List<DeviceRequestAllocationResult> results = new ArrayList<>();
    for (DeviceRequestAllocationResult r :
        claim.getStatus().getAllocation().getDevices().getResults()) {
      if (DraNames.DRIVER.equals(r.getDriver())) {
        results.add(r);
      }
    }
    Set<String> pools = new HashSet<>();
    for (LocalDevice d : devices.all()) {
      pools.add(poolOf(d));
    }
    Map<String, List<String>> byInstance = new LinkedHashMap<>();
    List<PreparedDevice> devices = new ArrayList<>();
    for (DeviceRequestAllocationResult r : results) {
      String where = "device " + r.getPool() + "/" + r.getDevice();
      if (!pools.contains(r.getPool())) {
        return Result.failed(where + " is not on node " + node + " (no such pool here)");
      }
      Optional<Slot> slot = lookup(r.getPool(), r.getDevice());
      if (slot.isEmpty()) {
        return Result.failed(
            where
                + (isSharedPool(r.getPool())
                    ? " is not seen by node " + node + " (gone?)"
                    : " is not published by node " + node + " (gone?)"));
      }
      if (!slot.get().device().online()) {
        return Result.failed(where + " is offline on node " + node);
      }
      if (r.getPool().equals(DraNames.sharedPool(slot.get().device().configuration().name()))
          && !seenHere(slot.get().device().instanceName())) {
        return Result.failed(where + " is not seen by node " + node + " (not in its nodes)");
      }
      byInstance
          .computeIfAbsent(slot.get().device().instanceName(), k -> new ArrayList<>())
          .add(slot.get().slotId());
      devices.add(
          new PreparedDevice(
              r.getRequest() == null ? List.of() : List.of(r.getRequest()),
              r.getPool(),
              r.getDevice(),
              List.of(
                  CdiNames.qualifiedName(
                      slot.get().device().configuration().name(), slot.get().slotId()))));
    }
    SlotUsage.ClaimUse usage = new SlotUsage.ClaimUse(ref.uid(), node);
    Map<String, List<String>> newlyClaimed = new LinkedHashMap<>();
    for (Map.Entry<String, List<String>> e : byInstance.entrySet()) {
      List<String> before = heldFor(e.getKey(), usage);
      try {
        slotClaims.claimForResourceClaim(e.getKey(), e.getValue(), usage);
      } catch (AllocationException ex) {
        newlyClaimed.forEach(slotClaims::releaseResourceClaim);
        return Result.failed(ex.getMessage());
      }
      List<String> fresh = new ArrayList<>(e.getValue());
      fresh.removeAll(before);
      newlyClaimed.put(e.getKey(), fresh);
    }
    prepared.put(ref.uid(), byInstance);
    return new Result(devices, "");
  }

  /** Unprepares one claim: frees every slot it holds on this node. */
  public Result unprepare(ClaimRef ref) {
    SlotUsage.ClaimUse usage = new SlotUsage.ClaimUse(ref.uid(), node);
    Map<String, List<String>> slots = prepared.remove(ref.uid());
    Set<String> instances = new java.util.TreeSet<>();
    if (slots != null) {
      instances.addAll(slots.keySet());
    }
    // Also what the store shows (prepared before this agent started).
    devices.all().forEach(d -> instances.add(d.instanceName()));
    List<String> freed = new ArrayList<>();
    for (String instance : instances) {
      List<String> held = heldFor(instance, usage);
      if (held.isEmpty()) {
        continue;
      }
      slotClaims.releaseResourceClaim(instance, held);
      List<String> still = heldFor(instance, usage);
      if (!still.isEmpty()) {
        if (slots != null) {
          prepared.put(ref.uid(), slots);
        }
        String error = "slots " + still + " of instance " + instance + " could not be freed";
        LOG.warn("ResourceClaim {} not unprepared on node {}: {}", ref, node, error);
        return Result.failed(error);
      }
      freed.addAll(held);
    }
    LOG.info(
        "ResourceClaim {} unprepared on node {}{}",
        ref,
        node,
        freed.isEmpty() ? " (nothing held)" : ": freed " + freed);
    return new Result(List.of(), "");
  }

  /** The slots of {@code instance} the store shows held with {@code usage}. */
  private List<String> heldFor(String instance, SlotUsage usage) {
    try {
      Optional<Instance> stored = store.get(instance);
      if (stored.isEmpty()) {
        return List.of();
      }
      List<String> held = new ArrayList<>();
      stored
          .get()
          .deviceUsage()
          .forEach(
              (slot, u) -> {
                if (u.equals(usage)) {
                  held.add(slot);
                }
              });
      return held;
    } catch (StoreException e) {
      return List.of();
    }
  }

  /** The slot a published device name of a pool stands for. */
  private Optional<Slot> lookup(String pool, String device) {
    // Usually the device name is the slot id itself.
    int dash = device.lastIndexOf('-');
    if (dash > 0) {
      Optional<LocalDevice> local = devices.get(device.substring(0, dash));
      if (local.isPresent()
          && poolOf(local.get()).equals(pool)
          && slotExists(local.get(), device)) {
        return Optional.of(new Slot(local.get(), device));
      }
    }
    for (LocalDevice d : devices.all()) {
      if (!poolOf(d).equals(pool)) {
        continue;
      }
      int capacity = capacityOf(d);
      for (int n = 0; n < capacity; n++) {
        String slotId = InstanceNames.slotId(d.instanceName(), n);
        if (DraNames.device(slotId).equals(device)) {
          return Optional.of(new Slot(d, slotId));
        }
      }
    }
    return Optional.empty();
  }

  /**
   * The pool a local device is published in: its Configuration's shared pool for a shared Instance,
   * else this node's.
   */
  private String poolOf(LocalDevice d) {
    boolean shared;
    try {
      shared = store.get(d.instanceName()).map(Instance::shared).orElse(d.device().shared());
    } catch (StoreException e) {
      shared = d.device().shared();
    }
    return shared
        ? DraNames.sharedPool(d.configuration().name())
        : DraNames.pool(node, d.configuration().name());
  }

  /** Whether a pool is the shared pool of a Configuration this node has devices of. */
  private boolean isSharedPool(String pool) {
    return devices.all().stream()
        .anyMatch(d -> DraNames.sharedPool(d.configuration().name()).equals(pool));
  }

  /** Whether the stored Instance lists this node among the nodes that see it. */
  private boolean seenHere(String instance) {
    try {
      return store.get(instance).map(i -> i.nodes().contains(node)).orElse(false);
    } catch (StoreException e) {
      return false;
    }
  }

  private boolean slotExists(LocalDevice d, String slotId) {
    int n = InstanceNames.slotIndex(slotId);
    return n >= 0
        && n < capacityOf(d)
        && InstanceNames.slotId(d.instanceName(), n).equals(slotId)
        && DraNames.isDnsLabel(slotId);
  }

  private int capacityOf(LocalDevice d) {
    try {
      return store
          .get(d.instanceName())
          .map(Instance::capacity)
          .orElse(d.configuration().capacity());
    } catch (StoreException e) {
      return d.configuration().capacity();
    }
  }
}
