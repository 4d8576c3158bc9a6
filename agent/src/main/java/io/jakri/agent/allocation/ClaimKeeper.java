package io.jakri.agent.allocation;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
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
 * deviceUsage}, a slot of this node freed by a hand edit, or an Instance recreated by another node
 * without them. A claim is written back only into a free slot of an Instance that lists this node
 * in {@code nodes} (a node joining an Instance writes its claims in the same write, see {@code
 * InstanceLifecycle}); a slot meanwhile held by another node is left alone and logged once, since
 * overwriting it would take it from a pod that may already run there.
 *
 * <p>Also learns into {@link LocalClaims} every slot the store shows held by this node, so a claim
 * survives in this node's record whatever later happens to the object, until this node itself gives
 * it up.
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
  public void changed(Instance instance) {
    for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
      if (slot.getValue().heldBy(node)) {
        claims.learn(instance.name(), slot.getKey(), slot.getValue());
      }
    }
    if (!missing(instance).isEmpty()) {
      schedule(instance.name());
    }
  }

  @Override
  public void deleted(String name) {
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

  /** The local claims {@code instance} lacks and can take: slots that are free there. */
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
          if (stored instanceof SlotUsage.Free) {
            missing.put(slot, usage);
          } else if (warned.add(instance.name() + "/" + slot + "/" + stored.print())) {
            LOG.warn(
                "instance {}: slot {} is in use on node {} but the Instance says {}; leaving it"
                    + " (if both nodes run a pod on it, one of them must be deleted)",
                instance.name(),
                slot,
                node,
                stored.print());
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
    try {
      updates.apply(
          name,
          current -> {
            written.clear();
            if (current.isEmpty()) {
              return current;
            }
            Map<String, SlotUsage> missing = missing(current.get());
            if (missing.isEmpty()) {
              return current;
            }
            Map<String, SlotUsage> usage = new LinkedHashMap<>(current.get().deviceUsage());
            usage.putAll(missing);
            written.addAll(missing.keySet());
            return Optional.of(current.get().withUsage(usage));
          });
    } catch (StoreException e) {
      LOG.warn(
          "instance {}: cannot write back the claims of node {}: {}", name, node, e.getMessage());
      return;
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
