package io.jakri.agent.allocation;

import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * This node's own record of the slots it holds: the authority on them, whatever the Instance
 * objects in the API server say (slot rule 1 in docs/operations.md). A slot enters when Allocate
 * claims it ({@link #hold}), when the kubelet's PodResources API reports a container using it
 * ({@link #hold}), or when the store shows it held by this node ({@link #learn}); it leaves only
 * when this node itself gives it up: the slot reclaimer frees it after the grace, an Allocate is
 * undone, or the device leaves this node ({@link #beginRelease} / {@link #endRelease}, {@link
 * #releaseAll}). {@link ClaimKeeper} writes these claims back into any Instance object that lacks
 * them.
 *
 * <p>A slot being released by this node is not learned again from the store until the release
 * ended, so the store states seen while the freeing write is retried do not bring it back.
 *
 * <p>Thread-safe. Listeners are told (on the calling thread) the Instance name whenever a slot
 * entered or changed its usage, and must not block.
 */
public final class LocalClaims {

  private final String node;
  private final Map<String, Map<String, SlotUsage>> held = new ConcurrentHashMap<>();
  private final Set<SlotKey> releasing = ConcurrentHashMap.newKeySet();
  private final List<Consumer<String>> listeners = new CopyOnWriteArrayList<>();

  public LocalClaims(String node) {
    this.node = Objects.requireNonNull(node, "node");
  }

  public String node() {
    return node;
  }

  /** Registers a listener told the Instance name whenever a slot entered or changed its usage. */
  public void addListener(Consumer<String> listener) {
    listeners.add(listener);
  }

  /**
   * Records that this node holds {@code slot} of {@code instance} as {@code usage}, on this node's
   * own authority (Allocate granted it, or a container uses it). Returns whether this was news.
   */
  public boolean hold(String instance, String slot, SlotUsage usage) {
    releasing.remove(new SlotKey(instance, slot));
    return put(instance, slot, usage);
  }

  /**
   * Records a slot the store shows held by this node, unless this node is releasing it. Returns
   * whether this was news.
   */
  public boolean learn(String instance, String slot, SlotUsage usage) {
    if (releasing.contains(new SlotKey(instance, slot))) {
      return false;
    }
    return put(instance, slot, usage);
  }

  private boolean put(String instance, String slot, SlotUsage usage) {
    if (!usage.heldBy(node)) {
      throw new IllegalArgumentException(
          "slot " + slot + " usage " + usage.print() + " is not held by node " + node);
    }
    SlotUsage[] before = {null};
    held.compute(
        instance,
        (k, slots) -> {
          Map<String, SlotUsage> m = slots == null ? new ConcurrentHashMap<>() : slots;
          before[0] = m.put(slot, usage);
          return m;
        });
    boolean news = !usage.equals(before[0]);
    if (news) {
      listeners.forEach(l -> l.accept(instance));
    }
    return news;
  }

  /** This node starts giving up a slot: forgotten now, and not learned from the store meanwhile. */
  public void beginRelease(String instance, String slot) {
    releasing.add(new SlotKey(instance, slot));
    remove(instance, slot);
  }

  /**
   * The release of a slot ended. {@code stillHeld} is the slot's usage when the release did not
   * happen after all (the slot is still held by this node in the store), else null.
   */
  public void endRelease(String instance, String slot, SlotUsage stillHeld) {
    releasing.remove(new SlotKey(instance, slot));
    if (stillHeld != null && stillHeld.heldBy(node)) {
      put(instance, slot, stillHeld);
    }
  }

  /** Forgets one slot at once (this node gave it up, or it is held elsewhere and unused here). */
  public void release(String instance, String slot) {
    remove(instance, slot);
  }

  private void remove(String instance, String slot) {
    held.computeIfPresent(
        instance,
        (k, slots) -> {
          slots.remove(slot);
          return slots.isEmpty() ? null : slots;
        });
  }

  /** Forgets every slot of an Instance (the device left this node). */
  public void releaseAll(String instance) {
    held.remove(instance);
  }

  /** The slots of {@code instance} this node holds, slot to usage (a copy). */
  public Map<String, SlotUsage> held(String instance) {
    Map<String, SlotUsage> slots = held.get(instance);
    return slots == null ? Map.of() : new LinkedHashMap<>(slots);
  }

  /** The Instances in which this node holds a slot. */
  public List<String> instances() {
    return new ArrayList<>(held.keySet());
  }

  private record SlotKey(String instance, String slot) {}
}
