package io.jakri.agent.discovery;

import io.jakri.agent.model.ContainerPaths;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.logging.LogText;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * A snapshot's mounts and device nodes held against {@link ContainerPaths}: each device keeps only
 * the entries that pass, and its refused ones are reported once (one warning, a count per kind)
 * until they change or the device leaves. One per {@link DeviceTable}; not thread-safe.
 */
final class RefusedEntries {

  /** Devices whose refusals are logged one by one per snapshot; the rest get one line. */
  static final int MAX_LOGGED_PER_SNAPSHOT = 20;

  /** Refused entries named in one device's line; more are counted. */
  static final int MAX_NAMED = 3;

  // Per tracked device (instance name), the hash of the refusals last reported: a device
  // reported again with the same refusals is not reported again. Only tracked devices are kept.
  private final Map<String, Integer> reported = new HashMap<>();

  /**
   * Replaces each device in {@code seen} (by instance name) by its checked self; adds one warning
   * per device whose refusals are new (at most {@link #MAX_LOGGED_PER_SNAPSHOT}, then one line for
   * the rest) and returns how many entries were newly refused, by kind.
   */
  Map<ContainerPaths.Kind, Integer> check(
      ContainerPaths rules, Map<String, DiscoveredDevice> seen, List<String> warnings) {
    Map<ContainerPaths.Kind, Integer> refused = new EnumMap<>(ContainerPaths.Kind.class);
    int unlogged = 0;
    int logged = 0;
    for (Map.Entry<String, DiscoveredDevice> e : seen.entrySet()) {
      if (e.getValue().mounts().isEmpty() && e.getValue().deviceSpecs().isEmpty()) {
        // Most devices have neither: nothing to check, and nothing allocated per snapshot.
        reported.remove(e.getKey());
        continue;
      }
      ContainerPaths.Checked checked = rules.check(e.getValue());
      e.setValue(checked.device());
      List<ContainerPaths.Refused> entries = checked.refused();
      if (entries.isEmpty()) {
        reported.remove(e.getKey());
        continue;
      }
      Integer before = reported.put(e.getKey(), entries.hashCode());
      if (before != null && before == entries.hashCode()) {
        continue;
      }
      for (ContainerPaths.Refused r : entries) {
        refused.merge(r.kind(), 1, Integer::sum);
      }
      if (logged < MAX_LOGGED_PER_SNAPSHOT) {
        logged++;
        warnings.add(line(e.getKey(), checked.device().id(), entries));
      } else {
        unlogged++;
      }
    }
    if (unlogged > 0) {
      warnings.add(
          unlogged
              + " more devices have refused mounts or device nodes (not logged one by one); each is"
              + " served without them");
    }
    return refused;
  }

  /** Forgets what was reported for a device that is no longer tracked. */
  void forget(String instanceName) {
    reported.remove(instanceName);
  }

  void clear() {
    reported.clear();
  }

  private static String line(String instance, String id, List<ContainerPaths.Refused> entries) {
    StringBuilder b =
        new StringBuilder("device ")
            .append(instance)
            .append(" (id ")
            .append(LogText.quote(id.length() <= 80 ? id : id.substring(0, 80) + "..."))
            .append("): ")
            .append(entries.size())
            .append(entries.size() == 1 ? " entry" : " entries")
            .append(" refused, the device is served without ")
            .append(entries.size() == 1 ? "it" : "them")
            .append(": ");
    for (int i = 0; i < Math.min(MAX_NAMED, entries.size()); i++) {
      b.append(i == 0 ? "" : "; ").append(entries.get(i).describe());
    }
    if (entries.size() > MAX_NAMED) {
      b.append("; and ").append(entries.size() - MAX_NAMED).append(" more");
    }
    return b.toString();
  }
}
