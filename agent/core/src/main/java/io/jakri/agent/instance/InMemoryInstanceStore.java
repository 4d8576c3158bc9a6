package io.jakri.agent.instance;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * The standalone-mode store: Instances in a map, versions from a counter, listeners told
 * synchronously after each write (outside the lock is not needed: listeners must not block and must
 * not write back).
 */
public final class InMemoryInstanceStore implements InstanceStore {

  private final Map<String, Instance> instances = new HashMap<>();
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();
  private long nextVersion = 1;

  @Override
  public synchronized Optional<Instance> get(String name) {
    return Optional.ofNullable(instances.get(name));
  }

  @Override
  public synchronized List<Instance> list() {
    return new ArrayList<>(instances.values());
  }

  @Override
  public synchronized Instance create(Instance instance) throws StoreException {
    if (instances.containsKey(instance.name())) {
      throw new StoreException.Conflict("instance " + instance.name() + " already exists");
    }
    Instance stored = instance.withVersion(nextVersion++);
    instances.put(stored.name(), stored);
    listeners.forEach(l -> l.changed(stored));
    return stored;
  }

  @Override
  public synchronized Instance update(Instance instance) throws StoreException {
    requireSameVersion(instance);
    Instance stored = instance.withVersion(nextVersion++);
    instances.put(stored.name(), stored);
    listeners.forEach(l -> l.changed(stored));
    return stored;
  }

  @Override
  public synchronized void delete(Instance instance) throws StoreException {
    requireSameVersion(instance);
    instances.remove(instance.name());
    listeners.forEach(l -> l.deleted(instance.name()));
  }

  /** NotFound when the Instance is gone, Conflict when its stored version differs. */
  private void requireSameVersion(Instance instance) throws StoreException {
    Instance current = instances.get(instance.name());
    if (current == null) {
      throw new StoreException.NotFound("instance " + instance.name() + " not found");
    }
    if (current.version() != instance.version()) {
      throw new StoreException.Conflict(
          "instance " + instance.name() + " changed (version " + current.version() + ")");
    }
  }

  @Override
  public void addListener(Listener listener) {
    listeners.add(listener);
  }
}
