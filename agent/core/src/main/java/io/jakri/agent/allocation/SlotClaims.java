package io.jakri.agent.allocation;

import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The slot claims behind Allocate and DRA's prepare: claiming and freeing slots of an Instance for
 * this node, written to the Instance store and kept in this node's own record ({@link
 * LocalClaims}). It knows nothing of what is served: a grant reaches the served resources through
 * the record's listeners and the store's events. Thread-safe: called from gRPC threads, DRA and the
 * slot reclaimer's callers.
 */
public final class SlotClaims {

  private static final Logger LOG = LoggerFactory.getLogger(SlotClaims.class);

  /**
   * How long an Allocate waits for this node's own release of a slot it asks for (one Instance
   * write) before it is refused as {@code BEING_FREED}: well within the kubelet's Allocate
   * deadline.
   */
  static final Duration RELEASE_WAIT = Duration.ofSeconds(2);

  private final String node;
  private final InstanceUpdates updates;
  private final LocalClaims claims;
  // One claim at a time per Instance on this node: concurrent Allocates for the same Instance then
  // read each other's results from the store instead of racing each other into write conflicts
  // (which cost a rejected write plus a fresh read each against the API server).
  private final Map<String, Object> claimLocks = new ConcurrentHashMap<>();
  private final Consumer<SlotConflict> conflictSink;

  /**
   * @param conflicts told about write conflicts and refusals while claiming slots, on the thread
   *     that claimed after the claim ended; must not block
   */
  public SlotClaims(
      String node, InstanceUpdates updates, LocalClaims claims, Consumer<SlotConflict> conflicts) {
    this.node = node;
    this.updates = updates;
    this.claims = claims;
    this.conflictSink = conflicts;
  }

  public String node() {
    return node;
  }

  /** This node's record of the slots it holds. */
  public LocalClaims claims() {
    return claims;
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

  /** Drops the claim lock of an Instance that left this node. */
  void forget(String instanceName) {
    claimLocks.remove(instanceName);
  }

  /**
   * Claims {@code slots} of one Instance for this node, each with {@code usageFor(slot)}: free
   * slots and slots this node already holds the same way are granted (idempotent); any other holder
   * refuses the whole request.
   */
  Instance claim(String instanceName, List<String> slots, Function<String, SlotUsage> usageFor)
      throws AllocationException {
    synchronized (claimLocks.computeIfAbsent(instanceName, k -> new Object())) {
      return claimLocked(instanceName, slots, usageFor);
    }
  }

  private Instance claimLocked(
      String instanceName, List<String> slots, Function<String, SlotUsage> usageFor)
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
