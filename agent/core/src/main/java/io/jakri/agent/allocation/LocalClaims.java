package io.jakri.agent.allocation;

import io.jakri.agent.model.NodeClaims;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
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
public final class LocalClaims implements NodeClaims {

  private final String node;
  // One lock over the record and its markers: a store event observed while a claim or a release
  // moves between them must see either the before or the after of that move, never a mix (a mix
  // disowned this node's own fresh claim).
  private final Object lock = new Object();
  private final Map<String, Map<String, SlotUsage>> held = new HashMap<>();
  private final Set<SlotKey> releasing = new HashSet<>();
  private final Set<SlotKey> disowned = new HashSet<>();
  // Claims this node's Allocate is writing: their store echo arrives before hold() records them.
  private final Map<SlotKey, SlotUsage> claiming = new HashMap<>();
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
    boolean news;
    synchronized (lock) {
      SlotKey key = new SlotKey(instance, slot);
      releasing.remove(key);
      claiming.remove(key);
      news = put(instance, slot, usage);
    }
    return told(news, instance);
  }

  /**
   * Takes note of a slot's usage as the store shows it. A slot held by this node that this record
   * lacks is taken into the record when {@code adopt} (the agent sees the Instance for the first
   * time, so the claim may be its own from before a restart), else it is disowned (see the class
   * comment) unless this node is releasing it or writing that claim. A slot held by another node is
   * no longer disowned. Returns whether the slot is disowned afterwards.
   */
  public boolean observe(String instance, String slot, SlotUsage usage, boolean adopt) {
    SlotKey key = new SlotKey(instance, slot);
    boolean adopted = false;
    synchronized (lock) {
      if (usage instanceof SlotUsage.Free) {
        return disowned.contains(key);
      }
      if (!usage.heldBy(node)) {
        disowned.remove(key);
        return false;
      }
      Map<String, SlotUsage> slots = held.get(instance);
      if ((slots != null && slots.containsKey(slot))
          || releasing.contains(key)
          || usage.equals(claiming.get(key))) {
        return false;
      }
      if (adopt) {
        adopted = put(instance, slot, usage);
      } else {
        disowned.add(key);
      }
    }
    told(adopted, instance);
    return !adopt;
  }

  /**
   * Whether this node may grant {@code slot} as {@code wanted} when the store shows it as {@code
   * stored}: it is free and not disowned, or this record holds it as {@code wanted} (idempotent
   * grants to this node's own claims). A slot the store shows held by this node that this record
   * lacks is not grantable: this node never claimed it.
   */
  public boolean grantable(String instance, String slot, SlotUsage stored, SlotUsage wanted) {
    synchronized (lock) {
      if (stored instanceof SlotUsage.Free) {
        return !disowned.contains(new SlotKey(instance, slot));
      }
      Map<String, SlotUsage> slots = held.get(instance);
      return stored.equals(wanted) && slots != null && wanted.equals(slots.get(slot));
    }
  }

  /**
   * This node is about to write its claim on {@code slot} as {@code usage}: the store's echo of
   * that write, seen before {@link #hold} records the grant, is not disowned. Ended by {@link
   * #hold} or {@link #claimFailed}.
   */
  public void claiming(String instance, String slot, SlotUsage usage) {
    synchronized (lock) {
      claiming.put(new SlotKey(instance, slot), usage);
    }
  }

  /** This node's claim announced with {@link #claiming} was not written. */
  public void claimFailed(String instance, String slot) {
    synchronized (lock) {
      claiming.remove(new SlotKey(instance, slot));
    }
  }

  /** Whether this node is giving up {@code slot} right now (between begin and end of release). */
  public boolean releasing(String instance, String slot) {
    synchronized (lock) {
      return releasing.contains(new SlotKey(instance, slot));
    }
  }

  /**
   * Waits up to {@code timeout} until this node gives up none of {@code slots} any more (a release
   * under way ends with its write). Returns whether none is being released now.
   */
  public boolean awaitReleased(
      String instance, java.util.Collection<String> slots, Duration timeout)
      throws InterruptedException {
    long deadline = System.nanoTime() + timeout.toNanos();
    synchronized (lock) {
      while (slots.stream().anyMatch(s -> releasing.contains(new SlotKey(instance, s)))) {
        long left = deadline - System.nanoTime();
        if (left <= 0) {
          return false;
        }
        java.util.concurrent.TimeUnit.NANOSECONDS.timedWait(lock, left);
      }
      return true;
    }
  }

  /**
   * Whether the store showed {@code slot} held by this node although this node never claimed it.
   */
  public boolean disowned(String instance, String slot) {
    synchronized (lock) {
      return disowned.contains(new SlotKey(instance, slot));
    }
  }

  /** Under {@link #lock}: records the slot; whether that was news (listeners to be told). */
  private boolean put(String instance, String slot, SlotUsage usage) {
    if (!usage.heldBy(node)) {
      throw new IllegalArgumentException(
          "slot " + slot + " usage " + usage.print() + " is not held by node " + node);
    }
    disowned.remove(new SlotKey(instance, slot));
    SlotUsage before = held.computeIfAbsent(instance, k -> new HashMap<>()).put(slot, usage);
    return !usage.equals(before);
  }

  /** Tells the listeners, outside the lock, when {@code news}; returns {@code news}. */
  private boolean told(boolean news, String instance) {
    if (news) {
      listeners.forEach(l -> l.accept(instance));
    }
    return news;
  }

  /** This node starts giving up a slot: forgotten now, and not learned from the store meanwhile. */
  public void beginRelease(String instance, String slot) {
    synchronized (lock) {
      releasing.add(new SlotKey(instance, slot));
      remove(instance, slot);
    }
  }

  /**
   * The release of a slot ended. {@code stillHeld} is the slot's usage when the release did not
   * happen after all (the slot is still held by this node in the store), else null.
   */
  public void endRelease(String instance, String slot, SlotUsage stillHeld) {
    boolean news = false;
    synchronized (lock) {
      releasing.remove(new SlotKey(instance, slot));
      if (stillHeld != null && stillHeld.heldBy(node)) {
        news = put(instance, slot, stillHeld);
      }
      lock.notifyAll(); // awaitReleased
    }
    told(news, instance);
  }

  /** Forgets one slot at once (this node gave it up, or it is held elsewhere and unused here). */
  public void release(String instance, String slot) {
    synchronized (lock) {
      remove(instance, slot);
    }
  }

  private void remove(String instance, String slot) {
    Map<String, SlotUsage> slots = held.get(instance);
    if (slots != null) {
      slots.remove(slot);
      if (slots.isEmpty()) {
        held.remove(instance);
      }
    }
  }

  /** Forgets every slot of an Instance (the device left this node). */
  @Override
  public void releaseAll(String instance) {
    synchronized (lock) {
      held.remove(instance);
      disowned.removeIf(k -> k.instance().equals(instance));
    }
  }

  /** The slots of {@code instance} this node holds, slot to usage (a copy). */
  @Override
  public Map<String, SlotUsage> held(String instance) {
    synchronized (lock) {
      Map<String, SlotUsage> slots = held.get(instance);
      return slots == null ? Map.of() : new LinkedHashMap<>(slots);
    }
  }

  /** The Instances in which this node holds a slot. */
  public List<String> instances() {
    synchronized (lock) {
      return new ArrayList<>(held.keySet());
    }
  }

  private record SlotKey(String instance, String slot) {}
}
