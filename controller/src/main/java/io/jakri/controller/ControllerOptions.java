package io.jakri.controller;

import io.jakri.controller.objects.AllowedResource;
import java.time.Duration;
import java.util.List;

/**
 * How the controller runs.
 *
 * @param namespace where Configurations, Instances and brokers live
 * @param pendingGrace how long a broker Pod may stay Pending before it is replaced
 * @param nodeGrace how long a NotReady node keeps its place in Instances
 * @param resync how often every cached object is reconciled again
 * @param workers how many keys are reconciled in parallel
 * @param retryBase first retry delay after a failed reconcile (doubles per failure)
 * @param retryMax longest retry delay
 * @param instanceObjectResources the kinds {@code spec.instanceObjects} may create (empty: none)
 */
public record ControllerOptions(
    String namespace,
    Duration pendingGrace,
    Duration nodeGrace,
    Duration resync,
    int workers,
    Duration retryBase,
    Duration retryMax,
    List<AllowedResource> instanceObjectResources) {

  public ControllerOptions {
    if (workers < 1) {
      throw new IllegalArgumentException("workers must be at least 1, got " + workers);
    }
    instanceObjectResources = List.copyOf(instanceObjectResources);
  }

  /** Options that allow no instance object kinds. */
  public ControllerOptions(
      String namespace,
      Duration pendingGrace,
      Duration nodeGrace,
      Duration resync,
      int workers,
      Duration retryBase,
      Duration retryMax) {
    this(namespace, pendingGrace, nodeGrace, resync, workers, retryBase, retryMax, List.of());
  }

  /** A copy that may create instance objects of {@code resources}. */
  public ControllerOptions withInstanceObjectResources(List<AllowedResource> resources) {
    return new ControllerOptions(
        namespace, pendingGrace, nodeGrace, resync, workers, retryBase, retryMax, resources);
  }

  /** The defaults of the command line with {@code namespace}. */
  public static ControllerOptions defaults(String namespace) {
    return new ControllerOptions(
        namespace,
        Duration.ofMinutes(5),
        Duration.ofMinutes(5),
        Duration.ofMinutes(5),
        4,
        Duration.ofMillis(500),
        Duration.ofMinutes(2));
  }

  public ControllerOptions withPendingGrace(Duration d) {
    return new ControllerOptions(
        namespace, d, nodeGrace, resync, workers, retryBase, retryMax, instanceObjectResources);
  }

  public ControllerOptions withNodeGrace(Duration d) {
    return new ControllerOptions(
        namespace, pendingGrace, d, resync, workers, retryBase, retryMax, instanceObjectResources);
  }

  public ControllerOptions withRetry(Duration base, Duration max) {
    return new ControllerOptions(
        namespace, pendingGrace, nodeGrace, resync, workers, base, max, instanceObjectResources);
  }

  /** A copy for {@code other}'s namespace. */
  public ControllerOptions inNamespace(String other) {
    return new ControllerOptions(
        other,
        pendingGrace,
        nodeGrace,
        resync,
        workers,
        retryBase,
        retryMax,
        instanceObjectResources);
  }
}
