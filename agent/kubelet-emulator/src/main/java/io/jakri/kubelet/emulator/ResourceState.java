package io.jakri.kubelet.emulator;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ScheduledFuture;

/**
 * What the device manager knows about one resource. Not thread-safe: every access holds the
 * emulator's state lock.
 */
final class ResourceState {
  static final String HEALTHY = "Healthy";
  static final String UNHEALTHY = "Unhealthy";

  final String name;

  /** The current endpoint; empty after a kubelet restart or once the resource was dropped. */
  Optional<PluginEndpoint> endpoint = Optional.empty();

  /** True while the current endpoint's ListAndWatch stream is open. */
  boolean live;

  /** True once the stale timeout removed the resource: capacity reported as 0. */
  boolean dropped;

  /** Device id to "Healthy"/"Unhealthy", as the kubelet holds them. */
  Map<String, String> devices = new LinkedHashMap<>();

  /** Bumped on every register / stop so an old stale timer can tell it is outdated. */
  long epoch;

  Optional<ScheduledFuture<?>> staleTimer = Optional.empty();

  ResourceState(String name) {
    this.name = name;
  }

  long capacity() {
    return dropped ? 0 : devices.size();
  }

  long allocatable() {
    return dropped ? 0 : devices.values().stream().filter(HEALTHY::equals).count();
  }

  void cancelStaleTimer() {
    staleTimer.ifPresent(f -> f.cancel(false));
    staleTimer = Optional.empty();
  }
}
