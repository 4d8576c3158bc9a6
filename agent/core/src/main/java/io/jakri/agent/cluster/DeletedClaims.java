package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The last state of Instances seen deleted by someone else while they held slots, by name (slot
 * rule 2 in docs/operations.md): an Instance this agent creates again gets back the claims (and
 * holders) the deleted state carried, and the first state seen after the deletion is guarded
 * against it ({@link HolderOnlyRelease}). At most {@code capacity} are kept, the eldest go first;
 * one is dropped when an Instance of its name is seen again. Thread-safe.
 */
final class DeletedClaims {

  // The store's logger: these lines read as the store's, as they always did.
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesInstanceStore.class);

  /** The most deleted Instances remembered (for their claims) until they are written again. */
  static final int MAX_KEPT = 256;

  private final Map<String, CachedInstance> byName;

  DeletedClaims() {
    this(MAX_KEPT);
  }

  DeletedClaims(int capacity) {
    byName =
        Collections.synchronizedMap(
            new LinkedHashMap<>(16, 0.75f, false) {
              @Override
              protected boolean removeEldestEntry(Map.Entry<String, CachedInstance> eldest) {
                return size() > capacity;
              }
            });
  }

  /** Remembers {@code last}, the final state of a deleted Instance, if it held any slot. */
  void remember(String name, CachedInstance last) {
    if (last.value().deviceUsage().values().stream()
        .anyMatch(u -> !(u instanceof SlotUsage.Free))) {
      byName.put(name, last);
    }
  }

  /** Forgets and returns the remembered state of {@code name}, or null. */
  CachedInstance take(String name) {
    return byName.remove(name);
  }

  /**
   * {@code instance} with the claims its remembered deleted state carried restored into the slots
   * it leaves free, and their holders into {@code nodes}; {@code instance} itself when nothing of
   * that name is remembered.
   */
  Instance restore(Instance instance) {
    CachedInstance tomb = byName.get(instance.name());
    return tomb == null ? instance : restore(instance, tomb.value());
  }

  /** {@code instance} with the claims of {@code last} (a deleted state) in its free slots. */
  static Instance restore(Instance instance, Instance last) {
    Map<String, SlotUsage> usage = new LinkedHashMap<>(instance.deviceUsage());
    TreeSet<String> nodes = new TreeSet<>(instance.nodes());
    List<String> restored = new ArrayList<>();
    last.deviceUsage()
        .forEach(
            (slot, held) -> {
              if (!(held instanceof SlotUsage.Free) && usage.get(slot) instanceof SlotUsage.Free) {
                usage.put(slot, held);
                nodes.add(HolderOnlyRelease.holder(held));
                restored.add(slot + "=" + held.print());
              }
            });
    if (restored.isEmpty()) {
      return instance;
    }
    LOG.info(
        "instance {}: written again after it was deleted, with the claims it carried: {}",
        instance.name(),
        restored);
    return instance.withUsage(usage).withNodes(nodes);
  }
}
