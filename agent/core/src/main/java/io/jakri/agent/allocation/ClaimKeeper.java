package io.jakri.agent.allocation;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Writes this node's claims ({@link LocalClaims}) back into any Instance object that lacks them
 * (slot rule 1 in docs/operations.md): an Instance replaced by one with an empty or shorter {@code
 * deviceUsage}, a slot of this node freed or given to another holder by a hand edit, or an Instance
 * recreated by another node without them. A claim is written back only into an Instance that lists
 * this node in {@code nodes} (a node joining an Instance writes its claims in the same write, see
 * {@code InstanceLifecycle}). Another holder in a slot this node holds is overwritten once: no node
 * can have claimed the slot through its own compare-and-swap while this node held it (the others
 * refuse a slot held elsewhere, slot rule 3 keeps it held in their view when it is freed by someone
 * else), so that holder was written by hand or forged, and the node it names does not grant it
 * (slot rule 4). If that same holder comes back after the overwrite (two nodes both record the
 * slot, e.g. after the controller freed the slots of a node it wrongly took for dead), it is left
 * alone and logged once, so two agents never overwrite each other in a loop.
 *
 * <p>Also tells {@link LocalClaims} every slot the store shows held by this node: adopted into the
 * record the first time this agent sees the Instance (its claims from before a restart), disowned
 * afterwards when this node never claimed it.
 *
 * <p>Store events are handled on the calling thread without I/O; the writes run on {@code
 * executor}, one per Instance at a time, coalesced.
 */
public final class ClaimKeeper implements InstanceStore.Listener {

  private static final Logger LOG = LoggerFactory.getLogger(ClaimKeeper.class);

  private final LocalClaims claims;
  private final InstanceUpdates updates;
  private final Executor executor;
  private final String node;
  private final Set<String> queued = ConcurrentHashMap.newKeySet();
  private final Set<String> warned = ConcurrentHashMap.newKeySet();
  // Instances seen since this agent started: their slots held by this node are adopted only once.
  private final Set<String> seen = ConcurrentHashMap.newKeySet();
  // The newest version seen per Instance; guarded by this.
  private final Map<String, Long> newestSeen = new HashMap<>();
  // The other holder last overwritten per slot ("<instance>/<slot>"), so it is overwritten once.
  private final Map<String, SlotUsage> overwritten = new ConcurrentHashMap<>();

  public ClaimKeeper(LocalClaims claims, InstanceUpdates updates, Executor executor) {
    this.claims = claims;
    this.updates = updates;
    this.executor = executor;
    this.node = claims.node();
  }

  /** Starts listening to the store and to new local claims. */
  public void start() {
    updates.store().addListener(this);
    claims.addListener(this::check);
  }

  @Override
  public synchronized void changed(Instance instance) {
    // Listeners may be told of two states of one Instance out of order (the watch's and this
    // agent's own write's, on two threads): a state older than one already seen is stale, and
    // observing it after this node's release ended would disown the slot it just freed.
    Long newest = newestSeen.get(instance.name());
    if (newest != null && newest > instance.version()) {
      return;
    }
    newestSeen.put(instance.name(), instance.version());
    boolean adopt = seen.add(instance.name());
    for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
      if (claims.observe(instance.name(), slot.getKey(), slot.getValue(), adopt)
          && warned.add(instance.name() + "/" + slot.getKey() + "/disowned")) {
        LOG.warn(
            "instance {}: slot {} says node {} but node {} never claimed it (edited by hand?);"
                + " node {} does not grant it",
            instance.name(),
            slot.getKey(),
            node,
            node,
            node);
      }
    }
    if (!missing(instance).isEmpty()) {
      schedule(instance.name());
    }
  }

  @Override
  public synchronized void deleted(String name) {
    newestSeen.remove(name);
    // The Instance is written again by this node's discovery (with its claims) if the device is
    // still here; see InstanceLifecycle.seen.
  }

  /** A local claim entered: write it back if the stored Instance lacks it. */
  private void check(String name) {
    try {
      Optional<Instance> stored = updates.store().get(name);
      if (stored.isPresent() && !missing(stored.get()).isEmpty()) {
        schedule(name);
      }
    } catch (StoreException e) {
      LOG.debug(
          "instance {}: cannot read it to check this node's claims: {}", name, e.getMessage());
    }
  }

  /**
   * The local claims {@code instance} lacks and can take: slots that are free there, or held
   * otherwise by a holder not yet overwritten once.
   */
  private Map<String, SlotUsage> missing(Instance instance) {
    Map<String, SlotUsage> held = claims.held(instance.name());
    if (held.isEmpty() || !instance.nodes().contains(node)) {
      return Map.of();
    }
    Map<String, SlotUsage> missing = new LinkedHashMap<>();
    held.forEach(
        (slot, usage) -> {
          SlotUsage stored = instance.deviceUsage().get(slot);
          if (stored == null || stored.equals(usage)) {
            return;
          }
          if (stored instanceof SlotUsage.Free
              || !stored.equals(overwritten.get(instance.name() + "/" + slot))) {
            missing.put(slot, usage);
          } else if (warned.add(instance.name() + "/" + slot + "/" + stored.print())) {
            LOG.warn(
                "instance {}: slot {} is in use on node {} but the Instance says {} again after"
                    + " node {} wrote its claim back; leaving it (if both nodes run a pod on it,"
                    + " one of them must be deleted)",
                instance.name(),
                slot,
                node,
                stored.print(),
                node);
          }
        });
    return missing;
  }

  private void schedule(String name) {
    if (!queued.add(name)) {
      return;
    }
    try {
      executor.execute(
          () -> {
            queued.remove(name);
            writeBack(name);
          });
    } catch (RejectedExecutionException e) {
      queued.remove(name); // shutting down
    }
  }

  private void writeBack(String name) {
    List<String> written = new ArrayList<>();
    Map<String, SlotUsage> replaced = new LinkedHashMap<>();
    try {
      updates.apply(
          name,
          current -> {
            written.clear();
            replaced.clear();
            if (current.isEmpty()) {
              return current;
            }
            Map<String, SlotUsage> missing = missing(current.get());
            if (missing.isEmpty()) {
              return current;
            }
            Map<String, SlotUsage> usage = new LinkedHashMap<>(current.get().deviceUsage());
            missing.forEach(
                (slot, claim) -> {
                  SlotUsage before = usage.put(slot, claim);
                  if (before != null && !(before instanceof SlotUsage.Free)) {
                    replaced.put(slot, before);
                  }
                });
            written.addAll(missing.keySet());
            return Optional.of(current.get().withUsage(usage));
          });
    } catch (StoreException e) {
      LOG.warn(
          "instance {}: cannot write back the claims of node {}: {}", name, node, e.getMessage());
      return;
    }
    replaced.forEach((slot, holder) -> overwritten.put(name + "/" + slot, holder));
    if (!replaced.isEmpty()) {
      LOG.warn(
          "instance {}: node {} holds {} but the Instance named other holders {} (edited by hand?);"
              + " wrote node {}'s claims back",
          name,
          node,
          replaced.keySet(),
          replaced.values().stream().map(SlotUsage::print).toList(),
          node);
    }
    if (!written.isEmpty()) {
      LOG.info(
          "instance {}: wrote back node {}'s claims on {} (the Instance had lost them)",
          name,
          node,
          written);
    }
  }
}
