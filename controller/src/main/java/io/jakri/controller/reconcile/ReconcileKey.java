package io.jakri.controller.reconcile;

/**
 * What the work queue holds: the name of an Instance (its brokers, its Service, its nodes) or of a
 * Configuration (its Service and its condition). Values; equal keys coalesce in the queue.
 */
public sealed interface ReconcileKey {

  /** The object's name (namespace is the controller's). */
  String name();

  /** An Instance's brokers, Instance Service and node list. */
  record InstanceKey(String name) implements ReconcileKey {
    @Override
    public String toString() {
      return "Instance(" + name + ")";
    }
  }

  /** A Configuration's Service and {@code BrokersReady} condition. */
  record ConfigurationKey(String name) implements ReconcileKey {
    @Override
    public String toString() {
      return "Configuration(" + name + ")";
    }
  }
}
