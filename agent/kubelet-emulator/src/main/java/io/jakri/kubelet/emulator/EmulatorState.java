package io.jakri.kubelet.emulator;

import io.grpc.SynchronizationContext;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * What the emulator's parts share: the state lock and what it guards (lifecycle, generation,
 * resources, admitted pods, registrations in progress), the listeners with their ordered event
 * queue, and the small executor that runs callbacks and timers. The lock is never held during RPCs.
 */
final class EmulatorState {
  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  enum Lifecycle {
    NEW,
    RUNNING,
    CLOSED
  }

  /** Guards every field below that is not final, and the contents of the maps and the set. */
  final Object lock = new Object();

  /** Callbacks and timers: two daemon threads owned by the emulator. */
  final ScheduledThreadPoolExecutor executor;

  private final SynchronizationContext events;
  private final List<EmulatorListener> listeners = new CopyOnWriteArrayList<>();

  // Guarded by lock.
  Lifecycle lifecycle = Lifecycle.NEW;

  /** Bumped on restart and close: a registration of an older generation is not installed. */
  long generation;

  final Map<String, ResourceState> resources = new TreeMap<>();
  final Map<String, AdmittedPod> pods = new LinkedHashMap<>();
  final Set<PluginEndpoint> connecting = new HashSet<>();

  EmulatorState() {
    this.executor = new ScheduledThreadPoolExecutor(2, new NamedDaemonThreads());
    this.executor.setRemoveOnCancelPolicy(true);
    this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.events =
        new SynchronizationContext(
            (thread, error) -> log.warn("Emulator listener or checkpoint task failed", error));
  }

  void addListener(EmulatorListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  void removeListener(EmulatorListener listener) {
    listeners.remove(listener);
  }

  /** Queues a listener callback; call with the lock held, then {@link #fire()} after it. */
  void enqueue(Consumer<EmulatorListener> event) {
    events.executeLater(
        () -> {
          for (EmulatorListener l : listeners) {
            try {
              event.accept(l);
            } catch (RuntimeException e) {
              log.warn("Emulator listener {} failed", l, e);
            }
          }
        });
  }

  /** Queues other work (a checkpoint write) in order with the listener callbacks. */
  void executeLater(Runnable task) {
    events.executeLater(task);
  }

  /** Delivers queued events in order; never call with the lock held. */
  void fire() {
    events.drain();
  }

  void requireRunningLocked() {
    if (lifecycle != Lifecycle.RUNNING) {
      throw new IllegalStateException("kubelet emulator is not running (" + lifecycle + ")");
    }
  }

  private static final class NamedDaemonThreads implements ThreadFactory {
    private final AtomicInteger count = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, "kubelet-emulator-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }
}
