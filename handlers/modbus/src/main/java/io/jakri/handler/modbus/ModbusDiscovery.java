package io.jakri.handler.modbus;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.modbus.ModbusTransport.Failure;
import io.jakri.handler.modbus.ModbusTransport.ProbeException;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running modbus discovery for one Configuration: scans of the listed endpoints (every address of
 * every entry, on every port), one after the other, {@code scanIntervalSeconds} apart.
 *
 * <p>A scan starts its connections at {@code connectionsPerSecond} at most, each through the {@link
 * ModbusTransport}; when all have ended, identities that pass the filters become (or stay) devices;
 * a device not seen for longer than {@code gracePeriodSeconds} leaves, and one seen but now refused
 * by a filter leaves at once. The snapshot is reported after the first scan and whenever it
 * changes.
 *
 * <p>Logging: an unreachable address is normal in a scanned block (debug only); a peer that
 * connects and then misbehaves is warned about once per distinct problem category, until it
 * identifies itself again.
 *
 * <p>Threading: no thread of its own; all work runs on the scheduler. State is guarded by one lock,
 * held while reporting, so no snapshot follows {@link #close()}.
 */
final class ModbusDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(ModbusDiscovery.class);

  /** A device and when it last identified itself. */
  private record Seen(DiscoveredDevice device, long nanos) {}

  private final String configuration;
  private final ModbusDetails details;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final ModbusTransport transport;
  private final LongSupplier nanos;

  private final Object lock = new Object();
  // guarded by lock
  private boolean closed;
  private final Map<String, Seen> devices = new TreeMap<>();
  private final Map<String, String> warned = new HashMap<>();
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();
  private final List<ScheduledFuture<?>> pending = new ArrayList<>();
  private int scans;

  ModbusDiscovery(
      String configuration,
      ModbusDetails details,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      ModbusTransport transport,
      LongSupplier nanos) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.transport = Objects.requireNonNull(transport, "transport");
    this.nanos = Objects.requireNonNull(nanos, "nanos");
  }

  /** Schedules the first scan at once and returns. Call once. */
  void start() {
    schedule(this::scan, 0);
  }

  /** Scans completed so far (tests). */
  int scans() {
    synchronized (lock) {
      return scans;
    }
  }

  private void schedule(Runnable task, long delayMillis) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      pending.removeIf(ScheduledFuture::isDone);
      try {
        pending.add(scheduler.schedule(task, delayMillis, TimeUnit.MILLISECONDS));
      } catch (RejectedExecutionException e) {
        LOG.debug("modbus({}): scheduler shut down, discovery stops", configuration);
      }
    }
  }

  private boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }

  /** One endpoint to ask: the host as reported and where to connect. */
  private record Endpoint(String host, InetSocketAddress address) {}

  private void scan() {
    if (isClosed()) {
      return;
    }
    List<Endpoint> endpoints = endpoints();
    List<CompletableFuture<List<Identity>>> probes = new ArrayList<>();
    long spacingMicros = 1_000_000L / details.connectionsPerSecond();
    for (int i = 0; i < endpoints.size(); i++) {
      Endpoint endpoint = endpoints.get(i);
      CompletableFuture<List<Identity>> probe = new CompletableFuture<>();
      probes.add(probe);
      long delayMillis = i * spacingMicros / 1000;
      Runnable ask =
          () -> {
            if (isClosed()) {
              probe.complete(List.of());
              return;
            }
            transport
                .identify(
                    endpoint.address(),
                    new ModbusTransport.Query(
                        endpoint.host(), details.unitIds(), details.eachUnit(), details.timeout()))
                .handle(
                    (identities, error) -> {
                      if (error != null) {
                        note(endpoint, error);
                        return List.<Identity>of();
                      }
                      cleared(endpoint);
                      return identities;
                    })
                .thenAccept(probe::complete);
          };
      if (delayMillis == 0) {
        ask.run();
      } else {
        schedule(ask, delayMillis);
        synchronized (lock) {
          if (closed) {
            probe.complete(List.of());
          }
        }
      }
    }
    CompletableFuture.allOf(probes.toArray(CompletableFuture[]::new))
        .whenComplete(
            (ignored, error) -> {
              if (error != null) {
                LOG.warn("modbus({}): scan failed", configuration, error);
              }
              List<Identity> found = new ArrayList<>();
              for (CompletableFuture<List<Identity>> probe : probes) {
                found.addAll(probe.getNow(List.of()));
              }
              merge(found);
              schedule(this::scan, details.scanInterval().toMillis());
            });
  }

  /** Every listed address on every port; host names resolved now (first address). */
  private List<Endpoint> endpoints() {
    List<Endpoint> out = new ArrayList<>();
    for (Target target : details.addresses()) {
      List<String[]> hosts = new ArrayList<>();
      if (target instanceof Target.HostName name) {
        try {
          InetAddress resolved = InetAddress.getByName(name.name());
          hosts.add(new String[] {name.name(), resolved.getHostAddress()});
        } catch (UnknownHostException e) {
          noteOnce(name.name(), "unresolvable", "host name does not resolve: " + e.getMessage());
        }
      } else if (target instanceof Target.Block block) {
        for (String ip : block.addresses()) {
          hosts.add(new String[] {ip, ip});
        }
      }
      for (String[] host : hosts) {
        for (int port : details.ports()) {
          out.add(new Endpoint(host[0], new InetSocketAddress(host[1], port)));
        }
      }
    }
    return out;
  }

  private void note(Endpoint endpoint, Throwable error) {
    Throwable cause =
        error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
    String where = ModbusDevices.endpoint(endpoint.host(), endpoint.address().getPort());
    if (cause instanceof ProbeException probe) {
      Failure failure = probe.failure();
      if (!failure.reachable()) {
        LOG.debug(
            "modbus({}): {} {}: {}", configuration, where, failure.category(), failure.detail());
        return;
      }
      noteOnce(where, failure.category(), failure.detail());
    } else {
      noteOnce(where, "error", String.valueOf(cause));
    }
  }

  private void noteOnce(String where, String category, String detail) {
    synchronized (lock) {
      if (closed || category.equals(warned.get(where))) {
        LOG.debug("modbus({}): {}: {}: {}", configuration, where, category, detail);
        return;
      }
      warned.put(where, category);
    }
    LOG.warn("modbus({}): {} gives no identity ({}): {}", configuration, where, category, detail);
  }

  private void cleared(Endpoint endpoint) {
    synchronized (lock) {
      warned.remove(ModbusDevices.endpoint(endpoint.host(), endpoint.address().getPort()));
    }
  }

  private void merge(List<Identity> found) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      long now = nanos.getAsLong();
      for (Identity identity : found) {
        String id = ModbusDevices.id(identity);
        if (details.admits(identity)) {
          devices.put(id, new Seen(ModbusDevices.device(identity), now));
        } else {
          if (devices.remove(id) != null) {
            LOG.info("modbus({}): {} no longer passes the filters", configuration, id);
          }
          LOG.debug(
              "modbus({}): {} ({} / {} / {}) filtered out",
              configuration,
              id,
              identity.vendor(),
              identity.productCode(),
              identity.revision());
        }
      }
      long grace = details.gracePeriod().toNanos();
      devices.values().removeIf(seen -> now - seen.nanos() > grace);
      scans++;
      List<DiscoveredDevice> snapshot = devices.values().stream().map(Seen::device).toList();
      if (lastReported.isEmpty() || !lastReported.get().equals(snapshot)) {
        lastReported = Optional.of(snapshot);
        listener.devices(snapshot);
      }
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      pending.forEach(f -> f.cancel(false));
      pending.clear();
    }
    transport.close();
  }
}
