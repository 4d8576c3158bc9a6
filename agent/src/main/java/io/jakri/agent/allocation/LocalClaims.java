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
 * objects in the API server say (slot rules 1 and 4 in docs/operations.md). A slot enters when
 * Allocate claims it ({@link #hold}), when the kubelet's PodResources API reports a container using
 * it ({@link #hold}), or, once per Instance when the agent first sees it (its start), when the
 * store shows it held by this node ({@link #observe} with {@code adopt}); it leaves only when this
 * node itself gives it up: the slot reclaimer frees it after the grace, an Allocate is undone, or
 * the device leaves this node ({@link #beginRelease} / {@link #endRelease}, {@link #releaseAll}).
 * {@link ClaimKeeper} writes these claims back into any Instance object that lacks them.
 *
 * <p>A slot the store shows held by this node that is not in this record (and not being released)
 * is a claim this node never made: a hand edit or a forged holder. It is <em>disowned</em>: never
 * granted by this node ({@link #grantable}), not even after someone frees it, until the store shows
 * it held by another node (its real holder wrote its claim back, or another node claimed it) or
 * this node claims it through its own record.
 *
 * <p>A slot being released by this node is not taken again from the store until the release ended,
 * so the store states seen while the freeing write is retried do not bring it back.
 *
 * <p>Thread-safe. Listeners are told (on the calling thread) the Instance name whenever a slot
 * entered or changed its usage, and must not block.
 */
public final class LocalClaims {

  private final String node;
  private final Map<String, Map<String, SlotUsage>> held = new ConcurrentHashMap<>();
  private final Set<SlotKey> releasing = ConcurrentHashMap.newKeySet();
  private final Set<SlotKey> disowned = ConcurrentHashMap.newKeySet();
  // Claims this node's Allocate is writing: their store echo arrives before hold() records them.
  private final Map<SlotKey, SlotUsage> claiming = new ConcurrentHashMap<>();
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
    claiming.remove(new SlotKey(instance, slot));
    return put(instance, slot, usage);
  }

  /**
   * Takes note of a slot's usage as the store shows it. A slot held by this node that this record
   * lacks is taken into the record when {@code adopt} (the agent sees the Instance for the first
   * time, so the claim may be its own from before a restart), else it is disowned (see the class
   * comment) unless this node is releasing it. A slot held by another node is no longer disowned.
   * Returns whether the slot is disowned afterwards.
   */
  public boolean observe(String instance, String slot, SlotUsage usage, boolean adopt) {
    SlotKey key = new SlotKey(instance, slot);
    if (usage instanceof SlotUsage.Free) {
      return disowned.contains(key);
    }
    if (!usage.heldBy(node)) {
      disowned.remove(key);
      return false;
    }
    if (held(instance).containsKey(slot)
        || releasing.contains(key)
        || usage.equals(claiming.get(key))) {
      return false;
    }
    if (adopt) {
      put(instance, slot, usage);
      return false;
    }
    disowned.add(key);
    return true;
  }

  /**
   * Whether this node may grant {@code slot} as {@code wanted} when the store shows it as {@code
   * stored}: it is free and not disowned, or this record holds it as {@code wanted} (idempotent
   * grants to this node's own claims). A slot the store shows held by this node that this record
   * lacks is not grantable: this node never claimed it.
   */
  public boolean grantable(String instance, String slot, SlotUsage stored, SlotUsage wanted) {
    if (stored instanceof SlotUsage.Free) {
      return !disowned.contains(new SlotKey(instance, slot));
    }
    return stored.equals(wanted) && wanted.equals(held(instance).get(slot));
  }

  /**
   * This node is about to write its claim on {@code slot} as {@code usage}: the store's echo of
   * that write, seen before {@link #hold} records the grant, is not disowned. Ended by {@link
   * #hold} or {@link #claimFailed}.
   */
  public void claiming(String instance, String slot, SlotUsage usage) {
    claiming.put(new SlotKey(instance, slot), usage);
  }

  /** This node's claim announced with {@link #claiming} was not written. */
  public void claimFailed(String instance, String slot) {
    claiming.remove(new SlotKey(instance, slot));
  }

  /** Disowns a slot a claim found named for this node although this node never claimed it. */
  public void disown(String instance, String slot) {
    disowned.add(new SlotKey(instance, slot));
  }

  /**
   * Whether the store showed {@code slot} held by this node although this node never claimed it.
   */
  public boolean disowned(String instance, String slot) {
    return disowned.contains(new SlotKey(instance, slot));
  }

  private boolean put(String instance, String slot, SlotUsage usage) {
    if (!usage.heldBy(node)) {
      throw new IllegalArgumentException(
          "slot " + slot + " usage " + usage.print() + " is not held by node " + node);
    }
    disowned.remove(new SlotKey(instance, slot));
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
    disowned.removeIf(k -> k.instance().equals(instance));
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
