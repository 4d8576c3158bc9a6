package io.jakri.agent.deviceplugin;

import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
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
  private final Map<String, LinkedHashSet<ServedResource>> waiting = new LinkedHashMap<>();
  private int inFlight;
  private int size;

  StartQueue(int limit) {
    this.limit = limit;
  }

  /** Queues {@code entry} behind the others of its group; it is marked {@code queued}. */
  void add(ServedResource entry) {
    entry.queued = true;
    if (waiting.computeIfAbsent(groupOf(entry.resource()), k -> new LinkedHashSet<>()).add(entry)) {
      size++;
    }
  }

  /** Takes {@code entry} out of the queue (retired while waiting); a no-op when not queued. */
  void remove(ServedResource entry) {
    if (!entry.queued) {
      return;
    }
    entry.leaveQueue();
    String group = groupOf(entry.resource());
    LinkedHashSet<ServedResource> queue = waiting.get(group);
    if (queue != null && queue.remove(entry)) {
      size--;
      if (queue.isEmpty()) {
        waiting.remove(group);
      }
    }
  }

  /** Resources waiting for a round. */
  int size() {
    return size;
  }

  /** True when {@link #next()} would return a resource. */
  boolean canTake() {
    return inFlight < limit && !waiting.isEmpty();
  }

  /**
   * The next waiting resource (no longer marked queued) when fewer than {@code limit} rounds are
   * under way, its group moved to the back; empty otherwise.
   */
  Optional<ServedResource> next() {
    while (inFlight < limit && !waiting.isEmpty()) {
      var first = waiting.entrySet().iterator().next();
      String key = first.getKey();
      LinkedHashSet<ServedResource> queue = first.getValue();
      Iterator<ServedResource> it = queue.iterator();
      ServedResource entry = it.hasNext() ? it.next() : null;
      if (entry != null) {
        it.remove();
        size--;
      }
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

  /** Rounds under way. */
  int inFlight() {
    return inFlight;
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
    waiting.values().forEach(q -> q.forEach(ServedResource::leaveQueue));
    waiting.clear();
    size = 0;
  }

  /** Resources grouped approximately by Configuration: the name without its last dash part. */
  static String groupOf(String resource) {
    int dash = resource.lastIndexOf('-');
    return dash > 0 ? resource.substring(0, dash) : resource;
  }
}
