package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The {@link #ANNOTATION} of an Instance: the slots their holders freed themselves (slot rule 3 in
 * docs/operations.md), read by {@link HolderOnlyRelease} to tell a holder's own free from someone
 * else's.
 */
final class ReleasedSlots {

  /**
   * Annotation listing the slots their holders freed themselves: {@code <slot>=<node>@<rv>} entries
   * separated by commas, {@code rv} being the resourceVersion the freeing write was based on. An
   * entry is added when a node frees a slot it held and removed when the slot is claimed again; at
   * most {@link #MAX_RELEASES} entries are kept (the oldest go first).
   */
  static final String ANNOTATION = "akri.sh/released";

  /** The most entries {@link #ANNOTATION} keeps. */
  static final int MAX_RELEASES = 256;

  /** One entry of {@link #ANNOTATION}. */
  record Release(String node, long base) {}

  private ReleasedSlots() {}

  /**
   * The resource's annotations with {@link #ANNOTATION} updated for the write of {@code desired}
   * over {@code current}: an entry for each slot {@code node} held and frees, none for a slot that
   * becomes held. Empty when the annotation stays as it is.
   */
  static Optional<Map<String, String>> releasedAnnotations(
      CachedInstance current, Instance desired, String node) {
    Map<String, Release> released = releases(current.resource());
    boolean changed = false;
    for (Map.Entry<String, SlotUsage> slot : desired.deviceUsage().entrySet()) {
      SlotUsage want = slot.getValue();
      if (want instanceof SlotUsage.Free) {
        SlotUsage had = current.value().deviceUsage().get(slot.getKey());
        if (had != null && had.heldBy(node)) {
          released.remove(slot.getKey()); // re-inserted last: the newest
          released.put(slot.getKey(), new Release(node, desired.version()));
          changed = true;
        }
      } else if (released.remove(slot.getKey()) != null) {
        changed = true;
      }
    }
    if (released.keySet().retainAll(desired.deviceUsage().keySet())) {
      changed = true;
    }
    if (!changed) {
      return Optional.empty();
    }
    List<Map.Entry<String, Release>> entries = new ArrayList<>(released.entrySet());
    if (entries.size() > MAX_RELEASES) {
      entries.sort(Map.Entry.comparingByValue(Comparator.comparingLong(Release::base)));
      entries = entries.subList(entries.size() - MAX_RELEASES, entries.size());
    }
    Map<String, String> annotations = new LinkedHashMap<>();
    Map<String, String> existing = current.resource().getMetadata().getAnnotations();
    if (existing != null) {
      annotations.putAll(existing);
    }
    if (entries.isEmpty()) {
      annotations.remove(ANNOTATION);
    } else {
      StringBuilder text = new StringBuilder();
      for (Map.Entry<String, Release> e : entries) {
        if (!text.isEmpty()) {
          text.append(',');
        }
        text.append(e.getKey())
            .append('=')
            .append(e.getValue().node())
            .append('@')
            .append(e.getValue().base());
      }
      annotations.put(ANNOTATION, text.toString());
    }
    return Optional.of(annotations);
  }

  /** The entries of {@link #ANNOTATION}; malformed ones are left out. */
  static Map<String, Release> releases(io.jakri.crd.Instance resource) {
    Map<String, String> annotations = resource.getMetadata().getAnnotations();
    String text = annotations == null ? null : annotations.get(ANNOTATION);
    Map<String, Release> released = new LinkedHashMap<>();
    if (text == null || text.isEmpty()) {
      return released;
    }
    for (String entry : text.split(",")) {
      int eq = entry.indexOf('=');
      int at = entry.lastIndexOf('@');
      if (eq <= 0 || at <= eq + 1) {
        continue;
      }
      try {
        released.put(
            entry.substring(0, eq),
            new Release(entry.substring(eq + 1, at), Long.parseLong(entry.substring(at + 1))));
      } catch (NumberFormatException e) {
        // left out: an entry that cannot be read confirms nothing
      }
    }
    return released;
  }
}
