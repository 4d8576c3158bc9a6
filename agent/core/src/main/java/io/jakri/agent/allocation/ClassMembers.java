package io.jakri.agent.allocation;

import io.jakri.agent.model.LocalDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The member Instances of each class resource this node serves. {@link NodeResources} writes it as
 * it serves and retires; the class resources only read it. Thread-safe.
 */
final class ClassMembers {

  private final Map<String, Set<String>> members = new ConcurrentHashMap<>();

  /** The member Instances of a class resource, in name order. */
  List<String> of(String classResource) {
    Set<String> found = members.get(classResource);
    return found == null ? List.of() : new ArrayList<>(new TreeSet<>(found));
  }

  /** Adds {@code device} to its class; returns whether it is the class's first member. */
  boolean join(LocalDevice device) {
    Set<String> set =
        members.computeIfAbsent(device.classResource(), c -> ConcurrentHashMap.newKeySet());
    return set.add(device.instanceName()) && set.size() == 1;
  }

  /** Takes {@code device} out of its class; returns whether the class has members left. */
  boolean leave(LocalDevice device) {
    String cls = device.classResource();
    Set<String> set = members.get(cls);
    if (set != null) {
      set.remove(device.instanceName());
      if (!set.isEmpty()) {
        return true;
      }
      members.remove(cls);
    }
    return false;
  }
}
