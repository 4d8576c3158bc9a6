package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.ResourceState.HEALTHY;
import static io.jakri.kubelet.emulator.ResourceState.UNHEALTHY;

import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.logging.DurationText;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Device state and streams: follows each registered endpoint's ListAndWatch (every message a full
 * snapshot), marks every device unhealthy when the stream ends and drops the resource after the
 * stale timeout, and answers what a Node would show (capacity, allocatable, devices).
 */
final class DeviceStreams {
  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  private final EmulatorState state;
  private final CheckpointWriter checkpoint;
  private final Duration staleTimeout;

  DeviceStreams(EmulatorState state, CheckpointWriter checkpoint, Duration staleTimeout) {
    this.state = state;
    this.checkpoint = checkpoint;
    this.staleTimeout = staleTimeout;
  }

  // ---------------------------------------------------------------- queries

  Map<String, Long> capacity() {
    synchronized (state.lock) {
      Map<String, Long> out = new TreeMap<>();
      state.resources.forEach((name, rs) -> out.put(name, rs.capacity()));
      return Collections.unmodifiableMap(out);
    }
  }

  Map<String, Long> allocatable() {
    synchronized (state.lock) {
      Map<String, Long> out = new TreeMap<>();
      state.resources.forEach((name, rs) -> out.put(name, rs.allocatable()));
      return Collections.unmodifiableMap(out);
    }
  }

  Map<String, String> devices(String resource) {
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(resource);
      return rs == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(rs.devices));
    }
  }

  Set<String> registeredResources() {
    synchronized (state.lock) {
      Set<String> out = new TreeSet<>();
      state.resources.forEach(
          (name, rs) -> {
            if (rs.live) {
              out.add(name);
            }
          });
      return Collections.unmodifiableSet(out);
    }
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * A kubelet restart: every endpoint is forgotten (added to {@code closing}), open streams end and
   * known resources keep their key with no devices until their plugin registers again. Call with
   * the state lock held, then fire.
   */
  void restartLocked(List<PluginEndpoint> closing) {
    for (ResourceState rs : state.resources.values()) {
      rs.endpoint.ifPresent(closing::add);
      rs.endpoint = Optional.empty();
      if (rs.live) {
        rs.live = false;
        state.enqueue(l -> l.streamEnded(rs.name));
      }
      if (!rs.dropped) {
        rs.devices.clear();
        stopLocked(rs);
      }
    }
  }

  /** Closing: every endpoint goes to {@code closing}, no stale timer stays. Call with the lock. */
  void closeLocked(List<PluginEndpoint> closing) {
    for (ResourceState rs : state.resources.values()) {
      rs.endpoint.ifPresent(closing::add);
      rs.cancelStaleTimer();
    }
  }

  // ---------------------------------------------------------------- streams

  /** Opens the endpoint's ListAndWatch stream; the kubelet never redials when it ends. */
  void open(PluginEndpoint ep) {
    ep.async.listAndWatch(
        Empty.getDefaultInstance(),
        new StreamObserver<>() {
          @Override
          public void onNext(ListAndWatchResponse value) {
            onSnapshot(ep, value);
          }

          @Override
          public void onError(Throwable t) {
            onStreamEnd(ep, GoErrors.rpcError(t));
          }

          @Override
          public void onCompleted() {
            onStreamEnd(ep, "EOF");
          }
        });
  }

  private void onSnapshot(PluginEndpoint ep, ListAndWatchResponse response) {
    Map<String, String> snapshot = new LinkedHashMap<>();
    for (Device d : response.getDevicesList()) {
      // Anything but "Healthy" counts as unhealthy.
      snapshot.put(d.getID(), HEALTHY.equals(d.getHealth()) ? HEALTHY : UNHEALTHY);
    }
    boolean current;
    long healthy = snapshot.values().stream().filter(HEALTHY::equals).count();
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(ep.resource);
      current = rs != null && rs.live && rs.endpoint.orElse(null) == ep;
      if (current) {
        rs.devices = new LinkedHashMap<>(snapshot);
        Map<String, String> view = Collections.unmodifiableMap(snapshot);
        state.enqueue(l -> l.snapshot(ep.resource, view));
        checkpoint.saveLocked();
      }
    }
    state.fire();
    if (current) {
      log.info(
          "Resource {}: {} devices, {} healthy (ListAndWatch)",
          ep.resource,
          snapshot.size(),
          healthy);
    } else {
      log.debug("Ignored ListAndWatch message of replaced endpoint {}", ep);
    }
  }

  private void onStreamEnd(PluginEndpoint ep, String cause) {
    boolean current;
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(ep.resource);
      current = rs != null && rs.live && rs.endpoint.orElse(null) == ep;
      if (current) {
        rs.live = false;
        rs.devices.replaceAll((id, health) -> UNHEALTHY);
        stopLocked(rs);
        state.enqueue(l -> l.streamEnded(ep.resource));
        checkpoint.saveLocked();
      }
    }
    state.fire();
    if (current) {
      log.warn(
          "ListAndWatch of resource {} ended ({}): all devices unhealthy; dropped in {} unless it"
              + " registers again",
          ep.resource,
          cause,
          DurationText.of(staleTimeout));
    } else {
      log.debug("ListAndWatch of replaced endpoint {} ended ({})", ep, cause);
    }
    // The kubelet disconnects the client and never redials.
    ep.close();
  }

  /** Marks the resource stopped now and schedules its drop after the stale timeout. */
  private void stopLocked(ResourceState rs) {
    rs.epoch++;
    long epoch = rs.epoch;
    rs.cancelStaleTimer();
    try {
      rs.staleTimer =
          Optional.of(
              state.executor.schedule(
                  () -> dropIfStale(rs.name, epoch), staleTimeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      log.debug("Not scheduling the drop of {}: emulator closing", rs.name);
    }
  }

  private void dropIfStale(String resource, long epoch) {
    boolean dropped = false;
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(resource);
      if (state.lifecycle == EmulatorState.Lifecycle.RUNNING
          && rs != null
          && rs.epoch == epoch
          && !rs.live
          && !rs.dropped) {
        rs.dropped = true;
        rs.devices.clear();
        rs.endpoint = Optional.empty();
        rs.staleTimer = Optional.empty();
        dropped = true;
        state.enqueue(l -> l.resourceDropped(resource));
        checkpoint.saveLocked();
      }
    }
    state.fire();
    if (dropped) {
      log.info(
          "Resource {} had no device plugin for {}: dropped, node capacity now 0",
          resource,
          DurationText.of(staleTimeout));
    }
  }
}
