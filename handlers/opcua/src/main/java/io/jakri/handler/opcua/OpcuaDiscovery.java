package io.jakri.handler.opcua;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running opcua discovery for one Configuration: each discovery URL is asked FindServers on its
 * own schedule, and the union of what the URLs answered last is the snapshot.
 *
 * <p>Per URL: at most one request in flight; the next one is scheduled when the last has finished,
 * {@code pollInterval} later; after consecutive failures the delay doubles up to {@link
 * #MAX_BACKOFF} (or the interval, if longer). A URL that fails contributes nothing at once, so the
 * servers found through it leave the next snapshot (the agent marks them Unhealthy). At most {@link
 * #MAX_IN_FLIGHT} requests of one Configuration run at the same time; the rest wait their turn.
 *
 * <p>Threading: all work runs on the agent's scheduler and never waits for the network: requests
 * are futures completed by the OPC UA client, and their results are handled back on the scheduler.
 * Host name lookups for the servers' URLs (Akri's "does it resolve" rule) are the one blocking
 * call, and go through the JVM's address cache. State is guarded by one lock; snapshots are
 * reported under it, in order, only when they changed, and never after {@link #close()} returned.
 */
final class OpcuaDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(OpcuaDiscovery.class);

  /** The property Akri gives each device: the server's discovery URL. */
  static final String DISCOVERY_URL_PROPERTY = "OPCUA_DISCOVERY_URL";

  /** Most devices one Configuration reports; more are left out with a warning. */
  static final int MAX_DEVICES = 1024;

  /** Most distinct host names looked up for one answer. */
  static final int MAX_LOOKUPS = 64;

  /** Most FindServers requests one Configuration has in flight at once. */
  static final int MAX_IN_FLIGHT = 16;

  /** Longest delay between two requests to a URL that keeps failing (unless the interval is). */
  static final Duration MAX_BACKOFF = Duration.ofSeconds(60);

  private final String configuration;
  private final OpcuaDetails details;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final ServerFinder finder;
  private final HostResolver resolver;
  private final Duration deadline;
  private final Runnable onClose;

  private final Object lock = new Object();
  // all guarded by lock
  private final List<Target> targets = new ArrayList<>();
  private final Deque<Target> waiting = new ArrayDeque<>();
  private int inFlight;
  private boolean closed;
  private boolean truncatedWarned;
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();

  /** One discovery URL and what it answered last. Guarded by lock. */
  private static final class Target {
    final OpcTcpUrl url;
    boolean busy;
    boolean queued;
    int failures;
    List<OpcTcpUrl> found = List.of();
    ScheduledFuture<?> next;

    Target(OpcTcpUrl url) {
      this.url = url;
    }
  }

  OpcuaDiscovery(
      String configuration,
      OpcuaDetails details,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      ServerFinder finder,
      HostResolver resolver,
      Duration deadline,
      Runnable onClose) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.finder = Objects.requireNonNull(finder, "finder");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.deadline = Objects.requireNonNull(deadline, "deadline");
    this.onClose = Objects.requireNonNull(onClose, "onClose");
    for (OpcTcpUrl url : details.discoveryUrls()) {
      targets.add(new Target(url));
    }
  }

  /** Schedules the first request to every URL (and an empty snapshot if there is none). */
  void start() {
    synchronized (lock) {
      LOG.info(
          "opcua({}): polling {} every {} s",
          configuration,
          targets.stream().map(t -> t.url.text()).toList(),
          details.pollInterval().toSeconds());
      if (targets.isEmpty()) {
        schedule(this::reportNow, Duration.ZERO);
      }
      for (Target target : targets) {
        target.next = schedule(() -> poll(target), Duration.ZERO);
      }
    }
  }

  private void reportNow() {
    synchronized (lock) {
      if (!closed) {
        report();
      }
    }
  }

  private void poll(Target target) {
    synchronized (lock) {
      if (closed || target.busy || target.queued) {
        return;
      }
      if (inFlight >= MAX_IN_FLIGHT) {
        target.queued = true;
        waiting.add(target);
        return;
      }
      target.busy = true;
      inFlight++;
    }
    CompletableFuture<List<Application>> request;
    try {
      request = finder.findServers(target.url);
    } catch (RuntimeException e) {
      request = CompletableFuture.failedFuture(e);
    }
    CompletableFuture<List<Application>> answer = request;
    // The client has its own timeouts; this is the backstop that frees the URL regardless.
    ScheduledFuture<?> backstop =
        schedule(
            () ->
                answer.completeExceptionally(
                    new TimeoutException("no answer in " + deadline.toMillis() + " ms")),
            deadline);
    answer.whenComplete(
        (apps, error) -> {
          if (backstop != null) {
            backstop.cancel(false);
          }
          try {
            scheduler.execute(() -> finish(target, apps, error));
          } catch (RejectedExecutionException e) {
            // The agent is shutting down.
          }
        });
  }

  private void finish(Target target, List<Application> apps, Throwable error) {
    ServerSelection selection = null;
    if (error == null) {
      try {
        selection =
            ServerSelection.select(
                target.url, apps, details.applicationNames(), resolver, MAX_DEVICES, MAX_LOOKUPS);
      } catch (RuntimeException e) {
        error = e;
      }
    }
    synchronized (lock) {
      target.busy = false;
      inFlight--;
      if (closed) {
        return;
      }
      if (selection == null) {
        target.failures++;
        target.found = List.of();
        String why = describe(error);
        if (target.failures == 1) {
          LOG.warn("opcua({}): FindServers on {} failed: {}", configuration, target.url, why);
        } else {
          LOG.debug(
              "opcua({}): FindServers on {} failed {} times in a row: {}",
              configuration,
              target.url,
              target.failures,
              why);
        }
      } else {
        if (target.failures > 0) {
          LOG.info(
              "opcua({}): {} answers again after {} failures",
              configuration,
              target.url,
              target.failures);
        }
        target.failures = 0;
        target.found = selection.servers();
        log(target, selection);
      }
      target.next = schedule(() -> poll(target), delay(details.pollInterval(), target.failures));
      Target queued = waiting.poll();
      if (queued != null) {
        queued.queued = false;
        schedule(() -> poll(queued), Duration.ZERO);
      }
      report();
    }
  }

  private void log(Target target, ServerSelection selection) {
    if (selection.unusable() > 0) {
      LOG.warn(
          "opcua({}): {} answered {} applications; {} servers skipped, e.g. {}",
          configuration,
          target.url,
          selection.applications(),
          selection.unusable(),
          selection.examples());
    } else {
      LOG.debug(
          "opcua({}): {} answered {} applications, {} servers kept ({} not servers, {} filtered"
              + " out)",
          configuration,
          target.url,
          selection.applications(),
          selection.servers().size(),
          selection.notServers(),
          selection.filteredOut());
    }
  }

  /** The delay before asking a URL again after {@code failures} failures in a row. */
  static Duration delay(Duration interval, int failures) {
    if (failures <= 1) {
      return interval;
    }
    long cap = Math.max(interval.toMillis(), MAX_BACKOFF.toMillis());
    long doubled = interval.toMillis() << Math.min(failures - 1, 20);
    return Duration.ofMillis(Math.min(doubled, cap));
  }

  // Holding lock.
  private void report() {
    Map<String, DiscoveredDevice> devices = new LinkedHashMap<>();
    int total = 0;
    for (Target target : targets) {
      for (OpcTcpUrl url : target.found) {
        if (devices.containsKey(url.text())) {
          continue;
        }
        total++;
        if (devices.size() < MAX_DEVICES) {
          devices.put(
              url.text(),
              DiscoveredDevice.of(url.text(), Map.of(DISCOVERY_URL_PROPERTY, url.text()), true));
        }
      }
    }
    if (total > MAX_DEVICES && !truncatedWarned) {
      truncatedWarned = true;
      LOG.warn(
          "opcua({}): {} servers found; only the first {} are reported",
          configuration,
          total,
          MAX_DEVICES);
    } else if (total <= MAX_DEVICES) {
      truncatedWarned = false;
    }
    List<DiscoveredDevice> snapshot = List.copyOf(devices.values());
    if (lastReported.isPresent() && lastReported.get().equals(snapshot)) {
      return;
    }
    Set<String> before = new HashSet<>();
    lastReported.ifPresent(l -> l.forEach(d -> before.add(d.id())));
    for (DiscoveredDevice d : snapshot) {
      if (!before.remove(d.id())) {
        LOG.info("opcua({}): server appeared: {}", configuration, d.id());
      }
    }
    for (String id : before) {
      LOG.info("opcua({}): server left: {}", configuration, id);
    }
    lastReported = Optional.of(snapshot);
    try {
      listener.devices(snapshot);
    } catch (RuntimeException e) {
      LOG.warn("opcua({}): device listener failed", configuration, e);
    }
  }

  private ScheduledFuture<?> schedule(Runnable task, Duration delay) {
    try {
      return scheduler.schedule(task, delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      return null; // the agent is shutting down
    }
  }

  private static String describe(Throwable error) {
    Throwable cause = error;
    while (cause != null
        && cause.getCause() != null
        && (cause instanceof java.util.concurrent.CompletionException
            || cause instanceof java.util.concurrent.ExecutionException)) {
      cause = cause.getCause();
    }
    if (cause == null) {
      return "unknown error";
    }
    String message = cause.getMessage();
    return cause.getClass().getSimpleName()
        + (message == null || message.isBlank() ? "" : ": " + Printable.of(message));
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      for (Target target : targets) {
        if (target.next != null) {
          target.next.cancel(false);
        }
      }
      waiting.clear();
    }
    onClose.run();
  }
}
