package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore.Listener;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Function;

/**
 * The agent's view of the Instances, by name: fed with the resources the watch delivers and those
 * this agent's own writes return, whichever is newer by resourceVersion. Each state is cached as
 * {@link HolderOnlyRelease#guard} makes it from the previous one (or, after a deletion by someone
 * else, from the deleted state the {@link DeletedClaims} remember). An Instance in another
 * namespace than its Configuration's is ignored. Thread-safe; listeners are called from the
 * offering or forgetting thread, and each call reflects a state at least as new as the previous one
 * for that Instance.
 */
final class InstanceCache {

  private final String node;
  private final Function<String, Optional<String>> namespaceOf;
  private final Map<String, CachedInstance> cache = new ConcurrentHashMap<>();
  private final DeletedClaims deletedClaims;
  private final List<Listener> listeners = new CopyOnWriteArrayList<>();

  /**
   * @param node this agent's node (its own slots are never guarded)
   * @param namespaceOf the namespace of the named Configuration; empty when it is unknown
   */
  InstanceCache(String node, Function<String, Optional<String>> namespaceOf) {
    this(node, namespaceOf, new DeletedClaims());
  }

  InstanceCache(
      String node, Function<String, Optional<String>> namespaceOf, DeletedClaims deletedClaims) {
    this.node = node;
    this.namespaceOf = namespaceOf;
    this.deletedClaims = deletedClaims;
  }

  void addListener(Listener listener) {
    listeners.add(listener);
  }

  /** The cached state of {@code name}, or null. */
  CachedInstance get(String name) {
    return cache.get(name);
  }

  /** The agent's view of every cached Instance. */
  List<Instance> list() {
    List<Instance> all = new ArrayList<>(cache.size());
    cache.values().forEach(c -> all.add(c.value()));
    return all;
  }

  /**
   * {@code instance} with the claims of the state of that name last seen deleted restored into its
   * free slots (slot rule 2, see {@link DeletedClaims#restore(Instance)}).
   */
  Instance restore(Instance instance) {
    return deletedClaims.restore(instance);
  }

  /**
   * Whether {@code resource} is in its Configuration's namespace (or that Configuration is not
   * known here, so nothing says otherwise).
   */
  boolean ours(io.jakri.crd.Instance resource) {
    String configuration =
        resource.getSpec() == null ? null : resource.getSpec().getConfigurationName();
    if (configuration == null) {
      return true;
    }
    return namespaceOf
        .apply(configuration)
        .map(ns -> ns.equals(resource.getMetadata().getNamespace()))
        .orElse(true);
  }

  /**
   * Caches {@code resource} unless a newer version is cached; tells listeners when it changed.
   * Returns the agent's view of that Instance afterwards.
   */
  Instance offer(io.jakri.crd.Instance resource) {
    if (!ours(resource)) {
      CachedInstance mine = cache.get(resource.getMetadata().getName());
      return mine != null ? mine.value() : InstanceResources.toInstance(resource);
    }
    // Most watch events are echoes of this agent's own writes, already cached from the write's
    // response: skip converting them.
    String name = resource.getMetadata().getName();
    CachedInstance known = cache.get(name);
    long version = InstanceResources.version(resource);
    if (known != null && known.value().version() >= version) {
      return known.value();
    }
    Instance actual = InstanceResources.toInstance(resource);
    boolean[] changed = {false};
    CachedInstance[] made = {null};
    CachedInstance stored =
        cache.compute(
            name,
            (k, old) -> {
              if (old != null && old.value().version() >= version) {
                return old;
              }
              CachedInstance previous = old != null ? old : deletedClaims.take(name);
              made[0] = HolderOnlyRelease.guard(previous, resource, actual, node);
              changed[0] = old == null || !old.value().sameContent(made[0].value());
              return made[0];
            });
    if (made[0] != null) {
      HolderOnlyRelease.logGuards(known, made[0], node);
    }
    if (changed[0]) {
      for (Listener l : listeners) {
        l.changed(made[0].value());
      }
    }
    return made[0] != null ? made[0].value() : stored.value();
  }

  /**
   * Drops a cached Instance unless a newer version than {@code deletedVersion} is cached; when it
   * was deleted by someone (not by this agent's own delete: {@code remember}) and held slots,
   * remembers its last state for {@link #restore} and the guards of the next state seen.
   */
  void forget(String name, long deletedVersion, boolean remember) {
    CachedInstance[] removed = {null};
    cache.computeIfPresent(
        name,
        (k, old) -> {
          if (old.value().version() <= deletedVersion) {
            removed[0] = old;
            return null;
          }
          return old;
        });
    if (removed[0] != null) {
      if (remember) {
        deletedClaims.remember(name, removed[0]);
      }
      for (Listener l : listeners) {
        l.deleted(name);
      }
    }
  }
}
