package io.jakri.handler.zeroconf;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.io.IOException;
import java.net.InetAddress;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running zeroconf discovery for one Configuration: one {@link Browser} per chosen local address,
 * all feeding one {@link ServiceTable}.
 *
 * <p>Threading: {@link #start()} only schedules work; browsers are opened on the scheduler (JmDNS
 * creation blocks). Browser events arrive on JmDNS threads and are serialised by a lock; each event
 * that changes the table recomputes the full snapshot and, if it differs from the last one
 * reported, reports it to the listener while still holding the lock, so snapshots are reported in
 * order and never after {@link #close()} has returned. {@code close()} is idempotent, returns
 * immediately and hands each browser's slow close (about 2 s for JmDNS) to the scheduler.
 */
final class ZeroconfDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(ZeroconfDiscovery.class);

  /** Most services tracked per Configuration; more are ignored with a warning. */
  static final int MAX_SERVICES = 1024;

  private final String configuration;
  private final ZeroconfDetails details;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final Browser.Factory browsers;
  private final AddressSelector addresses;
  private final ServiceFilter filter;

  private final Object lock = new Object();
  // all guarded by lock
  private final ServiceTable table;
  private final List<Browser> open = new ArrayList<>();
  private boolean closed;
  private boolean failed;
  private boolean fullWarned;
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();

  ZeroconfDiscovery(
      String configuration,
      ZeroconfDetails details,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      Browser.Factory browsers,
      AddressSelector addresses,
      int maxServices) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.browsers = Objects.requireNonNull(browsers, "browsers");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    this.filter = ServiceFilter.of(details);
    this.table = new ServiceTable(maxServices);
  }

  /** Schedules opening the browsers and returns at once. Call once. */
  void start() {
    scheduler.execute(this::openBrowsers);
  }

  private void openBrowsers() {
    AddressSelector.Selection selection;
    try {
      selection = addresses.select(details.interfaces());
    } catch (IOException | RuntimeException e) {
      fail("cannot list the network interfaces: " + e.getMessage(), e);
      return;
    }
    for (String problem : selection.problems()) {
      LOG.warn("zeroconf({}): interfaces: {}", configuration, problem);
    }
    if (selection.addresses().isEmpty()) {
      fail(
          details.interfaces().isEmpty()
              ? "no network interface is up, multicast-capable and not loopback"
              : "none of interfaces " + details.interfaces() + " is usable",
          null);
      return;
    }
    int opened = 0;
    Exception lastError = null;
    for (InetAddress address : selection.addresses()) {
      synchronized (lock) {
        if (closed) {
          return;
        }
      }
      String source = address.getHostAddress();
      Browser browser;
      try {
        browser = browsers.open(address, details.kind(), details.domain(), events(source));
      } catch (IOException | RuntimeException e) {
        LOG.warn("zeroconf({}): cannot browse on {}: {}", configuration, source, e.getMessage());
        lastError = e;
        continue;
      }
      boolean keep;
      synchronized (lock) {
        keep = !closed;
        if (keep) {
          open.add(browser);
        }
      }
      if (!keep) {
        browser.close();
        return;
      }
      opened++;
      LOG.info(
          "zeroconf({}): browsing {} on {}",
          configuration,
          details.kind().qualified(details.domain()),
          source);
    }
    if (opened == 0) {
      fail(
          "cannot browse on any of "
              + selection.addresses().stream().map(InetAddress::getHostAddress).toList(),
          lastError);
    }
  }

  private Browser.Events events(String source) {
    return new Browser.Events() {
      @Override
      public void resolved(ServiceRecord service) {
        synchronized (lock) {
          if (closed) {
            return;
          }
          ServiceTable.Change change = table.put(source, service);
          if (change == ServiceTable.Change.FULL) {
            if (!fullWarned) {
              fullWarned = true;
              LOG.warn(
                  "zeroconf({}): already tracking {} services; ignoring {} and further ones",
                  configuration,
                  table.size(),
                  service.fullName());
            }
            return;
          }
          if (change == ServiceTable.Change.CHANGED) {
            report();
          }
        }
      }

      @Override
      public void removed(String instanceName) {
        synchronized (lock) {
          if (closed) {
            return;
          }
          if (table.remove(source, instanceName)) {
            fullWarned = false;
            report();
          }
        }
      }
    };
  }

  // Holding lock.
  private void report() {
    List<DiscoveredDevice> snapshot = table.snapshot(filter);
    if (lastReported.isPresent() && lastReported.get().equals(snapshot)) {
      return;
    }
    Set<String> before = new HashSet<>();
    lastReported.ifPresent(l -> l.forEach(d -> before.add(d.id())));
    Set<String> now = new HashSet<>();
    for (DiscoveredDevice d : snapshot) {
      now.add(d.id());
      if (!before.contains(d.id())) {
        LOG.info(
            "zeroconf({}): service appeared: {} at {}:{}",
            configuration,
            d.id(),
            d.properties().getOrDefault(ZeroconfProperties.HOST, "?"),
            d.properties().get(ZeroconfProperties.PORT));
      }
    }
    for (String id : before) {
      if (!now.contains(id)) {
        LOG.info("zeroconf({}): service left: {}", configuration, id);
      }
    }
    lastReported = Optional.of(snapshot);
    try {
      listener.devices(snapshot);
    } catch (RuntimeException e) {
      LOG.warn("zeroconf({}): device listener failed", configuration, e);
    }
  }

  private void fail(String reason, Throwable cause) {
    synchronized (lock) {
      if (closed || failed) {
        return;
      }
      failed = true;
      LOG.warn("zeroconf({}): discovery failed: {}", configuration, reason);
      try {
        listener.failed(reason, cause);
      } catch (RuntimeException e) {
        LOG.warn("zeroconf({}): device listener failed", configuration, e);
      }
    }
  }

  @Override
  public void close() {
    List<Browser> toClose;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      toClose = new ArrayList<>(open);
      open.clear();
    }
    for (Browser browser : toClose) {
      try {
        scheduler.execute(browser::close);
      } catch (RejectedExecutionException e) {
        // The agent is shutting its scheduler down: close on a throwaway thread, still off the
        // caller's thread.
        Thread closer = new Thread(browser::close, "zeroconf-close-" + configuration);
        closer.setDaemon(true);
        closer.start();
      }
    }
  }
}
