package io.jakri.handler.simulated;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Akri's debugEcho availability check: reads a file every period and reports no devices while it
 * contains {@code OFFLINE}, all devices otherwise. A missing or unreadable file means online, as in
 * Akri. A snapshot is reported at start and then only when the state changes.
 *
 * <p>Thread-safe; runs only on the scheduler it is given (one short file read per period, at most
 * {@link #MAX_READ} bytes). {@link #close()} is idempotent; once it has returned nothing more is
 * reported.
 */
final class AvailabilityDiscovery implements Discovery {

  /** The word that takes the devices offline, as in Akri. */
  static final String OFFLINE = "OFFLINE";

  /** The most of the file that is read; the word must appear within it. */
  static final int MAX_READ = 64 * 1024;

  private final Object lock = new Object();
  private final SimulatedSettings.Availability availability;
  private final Supplier<List<DiscoveredDevice>> devices;
  private final DeviceListener listener;
  private boolean closed;
  private Boolean reportedOffline;
  private ScheduledFuture<?> checks;

  private AvailabilityDiscovery(
      SimulatedSettings.Availability availability,
      Supplier<List<DiscoveredDevice>> devices,
      DeviceListener listener) {
    this.availability = availability;
    this.devices = devices;
    this.listener = listener;
  }

  /** Schedules the checks (the first at once) and returns. */
  static AvailabilityDiscovery start(
      ScheduledExecutorService scheduler,
      SimulatedSettings.Availability availability,
      Supplier<List<DiscoveredDevice>> devices,
      DeviceListener listener) {
    AvailabilityDiscovery discovery = new AvailabilityDiscovery(availability, devices, listener);
    long periodMillis = availability.period().toMillis();
    synchronized (discovery.lock) {
      discovery.checks =
          scheduler.scheduleWithFixedDelay(
              discovery::check, 0, periodMillis, TimeUnit.MILLISECONDS);
    }
    return discovery;
  }

  private void check() {
    boolean offline = offline();
    synchronized (lock) {
      if (closed || Boolean.valueOf(offline).equals(reportedOffline)) {
        return;
      }
      reportedOffline = offline;
      try {
        listener.devices(offline ? List.of() : devices.get());
      } catch (RuntimeException e) {
        listener.failed("could not report the devices: " + e.getMessage(), e);
      }
    }
  }

  private boolean offline() {
    try (InputStream in = Files.newInputStream(availability.file())) {
      byte[] head = in.readNBytes(MAX_READ);
      return new String(head, StandardCharsets.UTF_8).contains(OFFLINE);
    } catch (NoSuchFileException e) {
      return false;
    } catch (IOException | SecurityException e) {
      // Akri treats an unreadable file as empty: the devices stay online.
      return false;
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      checks.cancel(false);
    }
  }
}
