package io.jakri.agent.instance;

import java.util.List;
import java.util.Optional;

/**
 * Where Instances live: in memory in standalone mode, in the API server in cluster mode. All
 * methods are thread-safe. Writes use optimistic concurrency on {@link Instance#version()}.
 */
public interface InstanceStore {

  Optional<Instance> get(String name) throws StoreException;

  List<Instance> list() throws StoreException;

  /** Stores a new Instance; {@link StoreException.Conflict} when the name is taken. */
  Instance create(Instance instance) throws StoreException;

  /**
   * Replaces an Instance whose stored version equals {@code instance.version()}; {@link
   * StoreException.Conflict} when it changed meanwhile, {@link StoreException.NotFound} when gone.
   * Returns the stored Instance with its new version.
   */
  Instance update(Instance instance) throws StoreException;

  /** Deletes the Instance if its stored version matches; Conflict/NotFound as for update. */
  void delete(Instance instance) throws StoreException;

  /**
   * Registers a listener told about every change after it happened, from any thread, in order per
   * Instance. Listeners must not block.
   */
  void addListener(Listener listener);

  /** Told about changes to stored Instances. */
  interface Listener {
    void changed(Instance instance);

    void deleted(String name);
  }
}
