package io.jakri.agent.deviceplugin;

import java.util.Optional;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * What {@link DevicePluginManager} knows of one served resource: its backend, its current server
 * and where it stands with the kubelet. Fields are written on the manager's control thread only;
 * the volatile ones are also read from other threads.
 */
final class ServedResource {
  final ResourceBackend backend;
  volatile ResourceServer server;
  volatile long registeredGeneration = -1;
  volatile long inFlightGeneration = -1;
  volatile boolean everRegistered;
  boolean starting;
  boolean queued;

  /** The server the queued start replaces, if any. */
  Optional<Previous> previous = Optional.empty();

  /**
   * The start-and-register round this resource holds (one of {@link DevicePluginManager#IN_FLIGHT},
   * from start until Register answers), or 0.
   */
  long round;

  long rounds;

  final AtomicBoolean publishPending = new AtomicBoolean();
  int attempts;
  ScheduledFuture<?> retry;

  ServedResource(ResourceBackend backend) {
    this.backend = backend;
  }

  String resource() {
    return backend.resourceName();
  }

  void cancelRetry() {
    if (retry != null) {
      retry.cancel(false);
      retry = null;
    }
  }

  /** A replaced server and whether the current kubelet knew its endpoint. */
  record Previous(ResourceServer server, boolean knownToKubelet) {}
}
