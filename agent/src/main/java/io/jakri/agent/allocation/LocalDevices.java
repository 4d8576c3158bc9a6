package io.jakri.agent.allocation;

import io.jakri.agent.model.LocalDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The devices discovered on this node (online or in their offline grace) and the class resource
 * each belongs to. {@link NodeResources} writes it; the served resources only read it. Thread-safe.
 */
final class LocalDevices {

  private final Map<String, LocalDevice> locals = new ConcurrentHashMap<>();
  private final Map<String, Set<String>> classMembers = new ConcurrentHashMap<>();

  Optional<LocalDevice> get(String instanceName) {
    return Optional.ofNullable(locals.get(instanceName));
  }

  List<LocalDevice> all() {
    return new ArrayList<>(locals.values());
  }

  /** The member Instances of a class resource, in name order. */
  List<String> members(String classResource) {
    Set<String> members = classMembers.get(classResource);
    return members == null ? List.of() : new ArrayList<>(new TreeSet<>(members));
  }

  /** Records {@code device}; returns the one it replaced, if any. */
  LocalDevice put(LocalDevice device) {
    return locals.put(device.instanceName(), device);
  }

  /** Forgets a device; returns it, if it was here. */
  LocalDevice remove(String instanceName) {
    return locals.remove(instanceName);
  }

  /** Adds {@code device} to its class; returns whether it is the class's first member. */
  boolean join(LocalDevice device) {
    Set<String> members =
        classMembers.computeIfAbsent(device.classResource(), c -> ConcurrentHashMap.newKeySet());
    return members.add(device.instanceName()) && members.size() == 1;
  }

  /**
   * Takes {@code device} out of its class; returns whether the class has members left (empty when
   * it had none to begin with).
   */
  Optional<Boolean> leave(LocalDevice device) {
    String cls = device.classResource();
    Set<String> members = classMembers.get(cls);
    if (members == null) {
      return Optional.empty();
    }
    members.remove(device.instanceName());
    if (members.isEmpty()) {
      classMembers.remove(cls);
      return Optional.of(false);
    }
    return Optional.of(true);
  }
}
