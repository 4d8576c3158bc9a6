package io.jakri.kubelet.emulator;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Keeps {@code kubelet_internal_checkpoint} following the state, in order with the listener events:
 * a write is queued after every change and reads the state when it runs, so a burst of changes
 * costs one write. After {@link #stop()} nothing more is written.
 */
final class CheckpointWriter {
  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  private final Path dir;
  private final boolean enabled;
  private final EmulatorState state;
  private final ReentrantLock writeLock = new ReentrantLock();

  // Guarded by writeLock: once set, queued checkpoint writes are dropped.
  private boolean stopped;
  // Guarded by state.lock: a checkpoint write is queued and has not read the state yet.
  private boolean queued;

  CheckpointWriter(Path dir, boolean enabled, EmulatorState state) {
    this.dir = dir;
    this.enabled = enabled;
    this.state = state;
  }

  /**
   * Queues a checkpoint write unless one is queued that has not read the state yet: that one will
   * write this change too. The state is read when the write runs, so a burst of registrations (each
   * ListAndWatch message changes the registered devices) costs one serialization of every resource,
   * not one per message; the file still follows every change, in order, since queued work runs one
   * task at a time. Call with the state lock held.
   */
  void saveLocked() {
    if (!enabled || queued) {
      return;
    }
    queued = true;
    state.executeLater(this::write);
  }

  /** Waits for a write in progress; writes still queued are dropped. */
  void stop() {
    writeLock.lock();
    try {
      stopped = true;
    } finally {
      writeLock.unlock();
    }
  }

  private void write() {
    String json;
    synchronized (state.lock) {
      queued = false;
      Map<String, List<String>> registered = new TreeMap<>();
      state.resources.forEach(
          (name, rs) -> {
            if (!rs.dropped) {
              registered.put(name, List.copyOf(rs.devices.keySet()));
            }
          });
      json = Checkpoint.json(state.pods.values(), registered);
    }
    writeLock.lock();
    try {
      if (!stopped) {
        Checkpoint.write(dir, json);
      }
    } catch (IOException e) {
      log.warn("Could not write {}: {}", dir.resolve(Checkpoint.FILE_NAME), e.toString());
    } finally {
      writeLock.unlock();
    }
  }
}
