package io.jakri.agent.deviceplugin;

import java.util.ArrayDeque;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;

/**
 * The resources waiting for a start-and-register round, and how many rounds are under way (see
 * {@link DevicePluginManager}): at most {@code limit} at once, the waiting ones taken in turn from
 * each Configuration (approximately: resources are grouped by their name without the last {@code -}
 * part). Confined to the manager's control thread.
 */
final class StartQueue {
  private final int limit;
  private final Map<String, ArrayDeque<ServedResource>> waiting = new LinkedHashMap<>();
  private int inFlight;

  StartQueue(int limit) {
    this.limit = limit;
  }

  /** Queues {@code entry} behind the others of its group; it is marked {@code queued}. */
  void add(ServedResource entry) {
    entry.queued = true;
    waiting.computeIfAbsent(groupOf(entry.resource()), k -> new ArrayDeque<>()).add(entry);
  }

  /**
   * The next waiting resource (no longer marked queued) when fewer than {@code limit} rounds are
   * under way, its group moved to the back; empty otherwise.
   */
  Optional<ServedResource> next() {
    while (inFlight < limit && !waiting.isEmpty()) {
      var first = waiting.entrySet().iterator().next();
      String key = first.getKey();
      ArrayDeque<ServedResource> queue = first.getValue();
      ServedResource entry = queue.poll();
      waiting.remove(key);
      if (!queue.isEmpty()) {
        waiting.put(key, queue); // to the back: the next group goes first
      }
      if (entry != null) {
        entry.queued = false;
        return Optional.of(entry);
      }
    }
    return Optional.empty();
  }

  /** A round began. */
  void acquire() {
    inFlight++;
  }

  /** A round ended. */
  void release() {
    inFlight--;
  }

  void clear() {
    waiting.clear();
  }

  /** Resources grouped approximately by Configuration: the name without its last dash part. */
  static String groupOf(String resource) {
    int dash = resource.lastIndexOf('-');
    return dash > 0 ? resource.substring(0, dash) : resource;
  }
}
