package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Slot rule 3 in docs/operations.md, "only a holder frees its slot": the agent's view keeps a slot
 * of another node held when the resource shows it freed without its holder's {@link ReleasedSlots}
 * entry, unless the same object stopped listing the holder in {@code nodes}.
 */
final class HolderOnlyRelease {

  // The store's logger: these lines read as the store's, as they always did.
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesInstanceStore.class);

  /**
   * A slot the resource shows free but this agent still treats as held by {@code holder}: it saw
   * the slot held by another node and then free, without that node's release entry. {@code since}
   * is the last version in which the slot was seen held.
   */
  record Guard(SlotUsage holder, long since) {}

  private HolderOnlyRelease() {}

  /**
   * The cached view of {@code resource} given the {@code previous} view of that name (cached, or
   * the last one seen before it was deleted): a slot {@code previous} shows held by another node
   * and the resource shows free stays held in the view (guarded, slot rule 3 in docs/operations.md)
   * unless its holder freed it itself (a {@link ReleasedSlots#ANNOTATION} entry of that node based
   * on a version at least as new as the last one seen with the claim) or the same object stopped
   * listing the holder in {@code nodes} (the holder left, or the controller removed it). So this
   * agent never grants a slot another node holds because someone else deleted, replaced or edited
   * the Instance: the holder writes its claim back, or confirms the free by freeing it itself.
   *
   * @param node this agent's node (its own slots are never guarded here)
   */
  static CachedInstance guard(
      CachedInstance previous, io.jakri.crd.Instance resource, Instance actual, String node) {
    if (previous == null) {
      return new CachedInstance(actual, resource);
    }
    boolean sameObject =
        Objects.equals(previous.resource().getMetadata().getUid(), resource.getMetadata().getUid());
    List<String> previousNodes =
        previous.resource().getSpec() == null || previous.resource().getSpec().getNodes() == null
            ? List.of()
            : previous.resource().getSpec().getNodes();
    Map<String, ReleasedSlots.Release> released = null;
    Map<String, Guard> guards = null;
    for (Map.Entry<String, SlotUsage> slot : previous.value().deviceUsage().entrySet()) {
      SlotUsage before = slot.getValue();
      if (before instanceof SlotUsage.Free || before.heldBy(node)) {
        continue;
      }
      if (!(actual.deviceUsage().get(slot.getKey()) instanceof SlotUsage.Free)) {
        continue; // held (by anyone), or no longer a slot
      }
      String holder = holder(before);
      Guard kept = previous.guards().get(slot.getKey());
      long since = kept != null ? kept.since() : previous.value().version();
      if (released == null) {
        released = ReleasedSlots.releases(resource);
      }
      ReleasedSlots.Release r = released.get(slot.getKey());
      boolean freedByHolder = r != null && r.node().equals(holder) && r.base() >= since;
      boolean holderRemoved =
          sameObject && previousNodes.contains(holder) && !actual.nodes().contains(holder);
      if (!freedByHolder && !holderRemoved) {
        if (guards == null) {
          guards = new LinkedHashMap<>();
        }
        guards.put(slot.getKey(), new Guard(before, since));
      }
    }
    if (guards == null) {
      return new CachedInstance(actual, resource);
    }
    Map<String, SlotUsage> usage = new LinkedHashMap<>(actual.deviceUsage());
    guards.forEach((slot, g) -> usage.put(slot, g.holder()));
    return new CachedInstance(actual.withUsage(usage), resource, Map.copyOf(guards));
  }

  /** Logs the guards {@code after} sets (WARN) and those it settles (INFO) since {@code before}. */
  static void logGuards(CachedInstance before, CachedInstance after, String node) {
    Map<String, Guard> old = before == null ? Map.of() : before.guards();
    after
        .guards()
        .forEach(
            (slot, g) -> {
              if (!g.equals(old.get(slot))) {
                LOG.warn(
                    "instance {}: slot {} held by {} was freed by someone else; node {} does not"
                        + " grant it until {} frees it itself or claims it again",
                    after.value().name(),
                    slot,
                    g.holder().print(),
                    node,
                    holder(g.holder()));
              }
            });
    old.keySet().stream()
        .filter(slot -> !after.guards().containsKey(slot))
        .forEach(
            slot ->
                LOG.info(
                    "instance {}: slot {} settled: {}",
                    after.value().name(),
                    slot,
                    after.value().deviceUsage().get(slot) instanceof SlotUsage.Free
                        ? "freed by its holder"
                        : "held by " + after.value().deviceUsage().get(slot).print()));
  }

  /** The node a non-free slot usage names. */
  static String holder(SlotUsage usage) {
    if (usage instanceof SlotUsage.NodeUse n) {
      return n.node();
    }
    if (usage instanceof SlotUsage.ClassUse c) {
      return c.node();
    }
    if (usage instanceof SlotUsage.ClaimUse c) {
      return c.node();
    }
    throw new IllegalArgumentException("a free slot has no holder");
  }
}
