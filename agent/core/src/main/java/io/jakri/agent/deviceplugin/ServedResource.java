package io.jakri.agent.deviceplugin;

import java.nio.file.Path;
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

  /**
   * Queued for a Register only (a retry, or a new kubelet): its server is serving. A start queued
   * meanwhile clears it.
   */
  boolean registerOnly;

  /** Takes it out of the start queue's marks (retired while waiting, or the queue cleared). */
  void leaveQueue() {
    queued = false;
    registerOnly = false;
  }

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

  /**
   * Remembers {@code old} as the server the queued start replaces. The new server waits for the old
   * one's end only where it matters: the current kubelet (of {@code generation}) knows the old
   * endpoint (its stream must end before the replacement registers), or the new socket would get
   * the same name. After a kubelet restart the kubelet that held the old stream is gone.
   */
  void replacing(ResourceServer old, long generation) {
    boolean knownToKubelet = registeredGeneration == generation || inFlightGeneration == generation;
    previous = Optional.of(new Previous(old, knownToKubelet));
  }

  /**
   * Whether a new server on {@code socket} must wait for the stop of this resource's servers under
   * way (always, unless {@link #replacing} said otherwise); forgets the replaced server.
   */
  boolean mustWaitForPrevious(Path socket) {
    boolean mustWait =
        previous.map(p -> p.knownToKubelet() || p.server().socket().equals(socket)).orElse(true);
    previous = Optional.empty();
    return mustWait;
  }

  /** Sends the devices to the current server's streams if they changed; none without a server. */
  void publish() {
    ResourceServer current = server;
    if (current != null) {
      current.publish();
    }
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
