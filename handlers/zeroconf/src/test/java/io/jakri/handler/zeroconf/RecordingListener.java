package io.jakri.handler.zeroconf;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;

/** A listener that keeps every snapshot and failure it is given. Thread-safe. */
final class RecordingListener implements DeviceListener {

  final List<List<DiscoveredDevice>> snapshots = new CopyOnWriteArrayList<>();
  final List<String> failures = new CopyOnWriteArrayList<>();

  @Override
  public void devices(List<DiscoveredDevice> devices) {
    snapshots.add(List.copyOf(devices));
  }

  @Override
  public void failed(String reason, Throwable cause) {
    failures.add(reason);
  }

  Optional<List<DiscoveredDevice>> last() {
    return snapshots.isEmpty()
        ? Optional.empty()
        : Optional.of(snapshots.get(snapshots.size() - 1));
  }

  List<String> lastIds() {
    return last().orElse(List.of()).stream().map(DiscoveredDevice::id).toList();
  }
}
