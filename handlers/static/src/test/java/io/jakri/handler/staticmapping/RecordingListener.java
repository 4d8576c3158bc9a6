package io.jakri.handler.staticmapping;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Records every snapshot and the thread it arrived on. Thread-safe. */
final class RecordingListener implements DeviceListener {

  final List<List<DiscoveredDevice>> snapshots = new CopyOnWriteArrayList<>();
  final List<Thread> threads = new CopyOnWriteArrayList<>();
  final List<String> failures = new CopyOnWriteArrayList<>();

  @Override
  public void devices(List<DiscoveredDevice> devices) {
    threads.add(Thread.currentThread());
    snapshots.add(List.copyOf(devices));
  }

  @Override
  public void failed(String reason, Throwable cause) {
    failures.add(reason);
  }
}
