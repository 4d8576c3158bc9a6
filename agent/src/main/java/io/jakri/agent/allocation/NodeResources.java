package io.jakri.agent.allocation;

import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.deviceplugin.Advertiser;
import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.v1beta1.CDIDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What this node advertises: one Instance resource per locally discovered device and one class
 * resource per device class, kept in step with local discovery and the Instance store. Also the
 * slot claims behind Allocate. Thread-safe: called from the discovery thread, store listeners and
 * gRPC threads.
 */
public final class NodeResources implements InstanceStore.Listener {

  private static final Logger LOG = LoggerFactory.getLogger(NodeResources.class);

  /**
   * How long an Allocate waits for this node's own release of a slot it asks for (one Instance
   * write) before it is refused as {@code BEING_FREED}: well within the kubelet's Allocate
   * deadline.
   */
  static final java.time.Duration RELEASE_WAIT = java.time.Duration.ofSeconds(2);

  private final String node;
  private final InstanceUpdates updates;
  private final Advertiser plugins;
  private final Map<String, LocalDevice> locals = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> classMembers = new ConcurrentHashMap<>();
  // One claim at a time per Instance on this node: concurrent Allocates for the same Instance then
  // read each other's results from the store instead of racing each other into write conflicts
  // (which cost a rejected write plus a fresh read each against the API server).
  private final Map<String, Object> claimLocks = new ConcurrentHashMap<>();
  private final Consumer<SlotConflict> conflictSink;
  private final LocalClaims claims;
  private final Optional<CdiSpecs> cdi;

  public NodeResources(
      String node, InstanceUpdates updates, Advertiser plugins, LocalClaims claims) {
    this(node, updates, plugins, claims, Optional.empty(), conflict -> {});
  }

  /**
   * @param cdi when present, the CDI spec of every local device's Instance is kept there (written
   *     before its resources are served, removed after they are retired), and Allocate names the
   *     CDI devices of the slots it gives
   * @param conflicts told about write conflicts and refusals while claiming slots, on the gRPC
   *     thread serving the Allocate after the claim ended; must not block
   */
  public NodeResources(
      String node,
      InstanceUpdates updates,
      Advertiser plugins,
      LocalClaims claims,
      Optional<CdiSpecs> cdi,
      Consumer<SlotConflict> conflicts) {
    this.node = node;
    this.conflictSink = conflicts;
    this.updates = updates;
    this.plugins = plugins;
    this.claims = claims;
    this.cdi = cdi;
  }

  /** This node's record of the slots it holds. */
  public LocalClaims claims() {
    return claims;
  }

  /**
   * The slot usage a device the kubelet reports in use stands for, when it is a slot of a device
   * discovered here, reported under this device's Instance resource (a node claim) or its class
   * resource (a class claim); empty for anything else (other device plugins' devices).
   */
  public Optional<SlotUsage> usageOf(String resourceName, String deviceId) {
    LocalDevice device = locals.get(ClassResource.instanceOf(deviceId));
    if (device == null) {
      return Optional.empty();
    }
    if (resourceName.equals(device.instanceResource())) {
      return Optional.of(new SlotUsage.NodeUse(node));
    }
    if (resourceName.equals(device.classResource())) {
      return Optional.of(new SlotUsage.ClassUse(deviceId, node));
    }
    return Optional.empty();
  }

  public String node() {
    return node;
  }

  /** Adds or updates a locally discovered device (online or in its offline grace). */
  public synchronized void upsertLocal(LocalDevice device) {
    // The spec first: a runtime must find it as soon as the kubelet can allocate the resource.
    cdi.ifPresent(
        c ->
            c.serve(
                device.instanceName(),
                device.configuration().name(),
                device.configuration().capacity(),
                InstanceContract.of(device)));
    LocalDevice previous = locals.put(device.instanceName(), device);
    if (previous != null && !previous.classResource().equals(device.classResource())) {
      leaveClass(previous);
    }
    if (previous == null) {
      plugins.serve(new InstanceResource(this, device.instanceName(), device.instanceResource()));
    }
    String cls = device.classResource();
    Set<String> members = classMembers.computeIfAbsent(cls, c -> ConcurrentHashMap.newKeySet());
    if (members.add(device.instanceName()) && members.size() == 1) {
      plugins.serve(new ClassResource(this, cls));
    }
    refresh(device.instanceName());
  }

  /** Forgets a local device: retires its Instance resource and, if it was the last, its class. */
  public synchronized void removeLocal(String instanceName) {
    LocalDevice previous = locals.remove(instanceName);
    if (previous == null) {
      return;
    }
    plugins.retire(previous.instanceResource());
    leaveClass(previous);
    claimLocks.remove(instanceName);
    cdi.ifPresent(c -> c.retire(instanceName));
  }

  /**
   * Names in {@code response} the CDI device of every slot in {@code slots} whose Instance has its
   * CDI spec on disk (none when CDI is off).
   */
  void addCdiDevices(ContainerAllocateResponse.Builder response, List<String> slots) {
    if (cdi.isEmpty()) {
      return;
    }
    for (String slot : new java.util.LinkedHashSet<>(slots)) {
      cdi.get()
          .qualifiedName(ClassResource.instanceOf(slot), slot)
          .ifPresent(name -> response.addCdiDevices(CDIDevice.newBuilder().setName(name)));
    }
  }

  private void leaveClass(LocalDevice device) {
    String cls = device.classResource();
    Set<String> members = classMembers.get(cls);
    if (members != null) {
      members.remove(device.instanceName());
      if (members.isEmpty()) {
        classMembers.remove(cls);
        plugins.retire(cls);
      } else {
        plugins.refresh(cls);
      }
    }
  }

  public Optional<LocalDevice> local(String instanceName) {
    return Optional.ofNullable(locals.get(instanceName));
  }

  /** Local devices, for diagnostics and the demo. */
  public List<LocalDevice> locals() {
    return new ArrayList<>(locals.values());
  }

  /** The member Instances of a class resource, in name order. */
  List<String> members(String classResource) {
    Set<String> members = classMembers.get(classResource);
    return members == null ? List.of() : new ArrayList<>(new TreeSet<>(members));
  }

  /**
   * Whether this node may grant {@code slot} as {@code wanted} given its stored usage: free and not
   * disowned, or held that way by this node's own record ({@link LocalClaims#grantable}).
   */
  boolean grantable(String instanceName, String slot, SlotUsage stored, SlotUsage wanted) {
    return claims.grantable(instanceName, slot, stored, wanted);
  }

  Optional<Instance> stored(String instanceName) {
    try {
      return updates.store().get(instanceName);
    } catch (StoreException e) {
      return Optional.empty();
    }
  }

  @Override
  public void changed(Instance instance) {
    refresh(instance.name());
  }

  @Override
  public void deleted(String name) {
    refresh(name);
  }

  private void refresh(String instanceName) {
    LocalDevice device = locals.get(instanceName);
    if (device != null) {
      plugins.refresh(device.instanceResource());
      plugins.refresh(device.classResource());
    }
  }

  /**
   * Claims {@code slots} of one Instance for this node, each with {@code usageFor(slot)}: free
   * slots and slots this node already holds the same way are granted (idempotent); any other holder
   * refuses the whole request.
   */
  Instance claim(
      String instanceName,
      List<String> slots,
      java.util.function.Function<String, SlotUsage> usageFor)
      throws AllocationException {
    synchronized (claimLocks.computeIfAbsent(instanceName, k -> new Object())) {
      return claimLocked(instanceName, slots, usageFor);
    }
  }

  private Instance claimLocked(
      String instanceName,
      List<String> slots,
      java.util.function.Function<String, SlotUsage> usageFor)
      throws AllocationException {
    // The mutation runs once per attempt: every attempt after the first followed a lost write, and
    // when the attempts ran out on a conflict the last one was lost too.
    int[] attempts = {0};
    boolean lastLost = false;
    boolean granted = false;
    // A slot this node's reclaimer is freeing right now (no container used it for the grace) is
    // free once that write lands: wait for it rather than refuse the kubelet.
    try {
      claims.awaitReleased(instanceName, slots, RELEASE_WAIT);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new AllocationException(
          AllocationException.Reason.BEING_FREED, "interrupted while device(s) were being freed");
    }
    for (String slot : slots) {
      claims.claiming(instanceName, slot, usageFor.apply(slot));
    }
    try {
      Optional<Instance> result =
          updates.apply(
              instanceName,
              current -> {
                attempts[0]++;
                Instance instance =
                    current.orElseThrow(
                        () ->
                            new AllocationException(
                                AllocationException.Reason.UNKNOWN_DEVICE,
                                "instance " + instanceName + " does not exist"));
                Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
                for (String slot : slots) {
                  SlotUsage held = usage.get(slot);
                  if (held == null) {
                    throw new AllocationException(
                        AllocationException.Reason.UNKNOWN_DEVICE,
                        "device " + slot + " is not a slot of instance " + instanceName);
                  }
                  SlotUsage wanted = usageFor.apply(slot);
                  if (!(held instanceof SlotUsage.Free) && !held.equals(wanted)) {
                    throw new AllocationException(
                        AllocationException.Reason.HELD_ELSEWHERE,
                        "device " + slot + " is in use (" + describe(held) + ")");
                  }
                  if (!claims.grantable(instanceName, slot, held, wanted)) {
                    if (claims.releasing(instanceName, slot)) {
                      // The slot reclaimer is freeing it (no container used it for the grace):
                      // not a hand edit, so not disowned; granted again once the free is written.
                      throw new AllocationException(
                          AllocationException.Reason.BEING_FREED,
                          "device "
                              + slot
                              + " is being freed by node "
                              + node
                              + " (no container used it for the reclaim grace); ask again");
                    }
                    // Not disowned here: this snapshot may be older than a free this node just
                    // wrote; ClaimKeeper disowns from the store's events, which come in order.
                    // Slot rule 4: the Instance names this node but this node never claimed the
                    // slot (a hand edit or a forged holder): some other node may use it.
                    throw new AllocationException(
                        AllocationException.Reason.HELD_ELSEWHERE,
                        "device "
                            + slot
                            + " is not free: the Instance "
                            + (held instanceof SlotUsage.Free ? "named" : "names")
                            + " node "
                            + node
                            + " as its holder but node "
                            + node
                            + " never claimed it (edited by hand?)");
                  }
                  usage.put(slot, wanted);
                }
                return Optional.of(instance.withUsage(usage));
              });
      // Granted: this node's own record holds it from now on, whatever the Instance says.
      for (String slot : slots) {
        claims.hold(instanceName, slot, usageFor.apply(slot));
      }
      granted = true;
      // The write's own store event may have been published before the record held the slots,
      // showing them not grantable (not this node's): publish again.
      refresh(instanceName);
      return result.orElseThrow();
    } catch (StoreException e) {
      lastLost = !(e instanceof StoreException.Unavailable);
      throw new AllocationException(
          AllocationException.Reason.STORE_UNAVAILABLE,
          "cannot record the claim on instance " + instanceName + ": " + e.getMessage());
    } catch (AllocationException e) {
      if (e.reason() == AllocationException.Reason.HELD_ELSEWHERE) {
        report(new SlotConflict.HeldElsewhere(instanceName));
      }
      throw e;
    } finally {
      if (!granted) {
        slots.forEach(slot -> claims.claimFailed(instanceName, slot));
      }
      int conflicts = attempts[0] - 1 + (lastLost ? 1 : 0);
      if (conflicts > 0) {
        report(new SlotConflict.LostWrites(instanceName, conflicts));
      }
    }
  }

  private void report(SlotConflict conflict) {
    try {
      conflictSink.accept(conflict);
    } catch (RuntimeException e) {
      LOG.warn("conflict sink failed on {}: {}", conflict, e.toString());
    }
  }

  /**
   * Claims {@code slots} of one Instance for a ResourceClaim the kubelet prepares on this node
   * (Dynamic Resource Allocation), with the same rules as Allocate: free slots and slots already
   * held for this claim are granted (idempotent), any other holder refuses the whole request.
   */
  public Instance claimForResourceClaim(
      String instanceName, List<String> slots, SlotUsage.ClaimUse usage)
      throws AllocationException {
    return claim(instanceName, slots, slot -> usage);
  }

  /** Frees {@code slots} of an Instance held by this node (a ResourceClaim was unprepared). */
  public void releaseResourceClaim(String instanceName, List<String> slots) {
    release(instanceName, slots);
  }

  /**
   * Frees every slot of {@code instanceName} this node holds, in the Instance and in this node's
   * record of its claims, as the slot reclaimer does with slots no container uses (for tests and
   * tools that reset an Instance; the holder is the only one whose free the other nodes honour at
   * once). Returns the slots it released.
   */
  public List<String> releaseHeld(String instanceName) {
    Set<String> slots = new TreeSet<>(Instance.SLOT_ORDER);
    slots.addAll(claims.held(instanceName).keySet());
    stored(instanceName)
        .ifPresent(
            i ->
                i.deviceUsage()
                    .forEach(
                        (slot, usage) -> {
                          if (usage.heldBy(node)) {
                            slots.add(slot);
                          }
                        }));
    List<String> list = new ArrayList<>(slots);
    if (!list.isEmpty()) {
      release(instanceName, list);
    }
    return list;
  }

  /** Frees {@code slots} of an Instance if this node holds them (undoing a partial claim). */
  void release(String instanceName, List<String> slots) {
    synchronized (claimLocks.computeIfAbsent(instanceName, k -> new Object())) {
      releaseLocked(instanceName, slots);
    }
  }

  private void releaseLocked(String instanceName, List<String> slots) {
    slots.forEach(slot -> claims.beginRelease(instanceName, slot));
    Optional<Instance> after = Optional.empty();
    try {
      after =
          updates.apply(
              instanceName,
              current -> {
                if (current.isEmpty()) {
                  return current;
                }
                Map<String, SlotUsage> usage = new LinkedHashMap<>(current.get().deviceUsage());
                for (String slot : slots) {
                  SlotUsage held = usage.get(slot);
                  if (held != null && held.heldBy(node)) {
                    usage.put(slot, SlotUsage.Free.INSTANCE);
                  }
                }
                return Optional.of(current.get().withUsage(usage));
              });
    } catch (StoreException e) {
      LOG.warn("instance {}: could not release {}: {}", instanceName, slots, e.getMessage());
      after = stored(instanceName);
    } finally {
      Optional<Instance> state = after;
      slots.forEach(
          slot ->
              claims.endRelease(
                  instanceName, slot, state.map(i -> i.deviceUsage().get(slot)).orElse(null)));
    }
  }

  private static String describe(SlotUsage usage) {
    if (usage instanceof SlotUsage.NodeUse n) {
      return "held on node " + n.node();
    }
    if (usage instanceof SlotUsage.ClassUse c) {
      return "held on node " + c.node() + " through a class resource";
    }
    if (usage instanceof SlotUsage.ClaimUse c) {
      return "held on node " + c.node() + " by ResourceClaim " + c.claimUid();
    }
    return "free";
  }

  /** A slot order that differs per node, so nodes sharing an Instance rarely pick the same slot. */
  static List<String> nodeOrder(String node, List<String> slots) {
    if (slots.isEmpty()) {
      return slots;
    }
    List<String> sorted = new ArrayList<>(slots);
    sorted.sort(Instance.SLOT_ORDER);
    int shift = Math.floorMod(node.hashCode(), sorted.size());
    List<String> rotated = new ArrayList<>(sorted.size());
    for (int i = 0; i < sorted.size(); i++) {
      rotated.add(sorted.get((i + shift) % sorted.size()));
    }
    return rotated;
  }
}
