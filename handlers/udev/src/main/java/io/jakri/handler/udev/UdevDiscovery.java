package io.jakri.handler.udev;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running udev discovery for one Configuration. Scans run on the context's scheduler: one at
 * start, one at once whenever {@link #changed()} is called (a {@code /dev} or udev-database event;
 * requests arriving while one is queued share it), two follow-ups shortly after an event (the
 * kernel removes a device's sysfs directory just after its node, and adds attributes just after
 * it), and a slow periodic one for devices without nodes. Each scan that finds a different set of
 * devices reports the full snapshot, under the lock {@link #close()} takes, so nothing is reported
 * once {@code close()} has returned.
 */
final class UdevDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(UdevDiscovery.class);
  static final List<Duration> FOLLOW_UPS = List.of(Duration.ofMillis(200), Duration.ofSeconds(1));

  /** Where change events come from. */
  interface Changes {
    /** Calls {@code onChange} (quickly, from any thread) on every change until closed. */
    AutoCloseable subscribe(Runnable onChange);
  }

  private final String configuration;
  private final Supplier<List<DiscoveredDevice>> scanner;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final Duration rescan;
  private final Changes changes;

  private final AtomicBoolean queued = new AtomicBoolean();
  private final Object scanLock = new Object();
  private final Object lock = new Object();
  // guarded by lock
  private boolean closed;
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();
  private ScheduledFuture<?> periodic;
  private final ScheduledFuture<?>[] followUps = new ScheduledFuture<?>[FOLLOW_UPS.size()];
  private AutoCloseable subscription;

  UdevDiscovery(
      String configuration,
      Supplier<List<DiscoveredDevice>> scanner,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      Duration rescan,
      Changes changes) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.scanner = Objects.requireNonNull(scanner, "scanner");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.rescan = Objects.requireNonNull(rescan, "rescan");
    this.changes = Objects.requireNonNull(changes, "changes");
  }

  /** Subscribes to changes and schedules the first scan; returns at once. Call once. */
  void start() {
    AutoCloseable sub = changes.subscribe(this::changed);
    synchronized (lock) {
      subscription = sub;
      periodic =
          scheduler.scheduleWithFixedDelay(
              this::requestScan, rescan.toMillis(), rescan.toMillis(), TimeUnit.MILLISECONDS);
    }
    requestScan();
  }

  /** A device node or the udev database changed: scan now and once or twice more soon. */
  void changed() {
    requestScan();
    synchronized (lock) {
      if (closed) {
        return;
      }
      for (int i = 0; i < followUps.length; i++) {
        if (followUps[i] != null) {
          followUps[i].cancel(false);
        }
        try {
          followUps[i] =
              scheduler.schedule(
                  this::requestScan, FOLLOW_UPS.get(i).toMillis(), TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
          return;
        }
      }
    }
  }

  private void requestScan() {
    if (queued.compareAndSet(false, true)) {
      try {
        scheduler.execute(this::scan);
      } catch (RejectedExecutionException e) {
        queued.set(false);
      }
    }
  }

  private void scan() {
    synchronized (scanLock) {
      queued.set(false);
      synchronized (lock) {
        if (closed) {
          return;
        }
      }
      List<DiscoveredDevice> devices;
      try {
        devices = scanner.get();
      } catch (RuntimeException e) {
        LOG.warn(
            "udev({}): scan failed, keeping the last devices: {}", configuration, e.toString());
        return;
      }
      synchronized (lock) {
        if (closed || lastReported.map(devices::equals).orElse(false)) {
          return;
        }
        logChanges(devices);
        lastReported = Optional.of(devices);
        listener.devices(devices);
      }
    }
  }

  private void logChanges(List<DiscoveredDevice> devices) {
    Set<String> before = new HashSet<>();
    lastReported.ifPresent(l -> l.forEach(d -> before.add(d.id())));
    Set<String> now = new HashSet<>();
    for (DiscoveredDevice d : devices) {
      now.add(d.id());
      if (!before.contains(d.id())) {
        LOG.info(
            "udev({}): device appeared: {} {}",
            configuration,
            d.id(),
            d.deviceSpecs().stream().map(DiscoveredDevice.DeviceSpec::hostPath).toList());
      }
    }
    for (String id : before) {
      if (!now.contains(id)) {
        LOG.info("udev({}): device vanished: {}", configuration, id);
      }
    }
  }

  @Override
  public void close() {
    AutoCloseable sub;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (periodic != null) {
        periodic.cancel(false);
      }
      for (ScheduledFuture<?> f : followUps) {
        if (f != null) {
          f.cancel(false);
        }
      }
      sub = subscription;
    }
    if (sub != null) {
      try {
        sub.close();
      } catch (Exception e) {
        LOG.debug("udev({}): unsubscribing: {}", configuration, e.toString());
      }
    }
  }
}
