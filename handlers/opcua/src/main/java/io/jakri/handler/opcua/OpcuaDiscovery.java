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
import java.util.concurrent.CancellationException;
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
 * #MAX_IN_FLIGHT} requests of one Configuration run at the same time, and each needs one of the
 * handler's {@link RequestSlots} (shared with its other Configurations, handed out in turns); the
 * rest wait their turn, oldest first. A request that has not ended at the deadline is given up
 * (completing its future tells the finder to let its connection go); closing gives up every request
 * in flight, so nothing of a closed discovery stays referenced by a timer or a slot.
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
  private final RequestSlots slots;
  private final RequestSlots.Waiter waiter = this::granted;
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
    // The request in flight and its deadline, while busy.
    CompletableFuture<List<Application>> request;
    ScheduledFuture<?> backstop;

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
      RequestSlots slots,
      Runnable onClose) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.finder = Objects.requireNonNull(finder, "finder");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
    this.deadline = Objects.requireNonNull(deadline, "deadline");
    this.slots = Objects.requireNonNull(slots, "slots");
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
    List<Target> start;
    synchronized (lock) {
      if (closed || target.busy || target.queued) {
        return;
      }
      target.queued = true;
      waiting.add(target);
      start = dispatch();
    }
    start.forEach(this::request);
  }

  /**
   * Holding lock: takes the URLs that may start now (oldest first) while this Configuration is
   * under its own cap and the handler has a slot; when the handler has none, this discovery waits
   * in line for one ({@link #granted}).
   */
  private List<Target> dispatch() {
    List<Target> start = new ArrayList<>();
    while (!waiting.isEmpty() && inFlight < MAX_IN_FLIGHT && slots.acquireOrWait(waiter)) {
      start.add(take());
    }
    return start;
  }

  // Holding lock, with a slot for it.
  private Target take() {
    Target target = waiting.poll();
    target.queued = false;
    target.busy = true;
    inFlight++;
    return target;
  }

  /**
   * The handler handed this discovery a slot; used on the scheduler, never on the giver's thread.
   */
  private void granted() {
    try {
      scheduler.execute(this::useGrant);
    } catch (RejectedExecutionException e) {
      slots.release(); // the agent is shutting down
    }
  }

  private void useGrant() {
    List<Target> start = new ArrayList<>();
    synchronized (lock) {
      if (!closed && !waiting.isEmpty() && inFlight < MAX_IN_FLIGHT) {
        start.add(take());
        start.addAll(dispatch()); // queues this discovery again if more URLs wait
      }
    }
    if (start.isEmpty()) {
      slots.release();
    }
    start.forEach(this::request);
  }

  /** Starts FindServers on a busy target that holds a slot; not holding lock. */
  private void request(Target target) {
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
    boolean abandoned;
    synchronized (lock) {
      abandoned = closed;
      if (!abandoned) {
        target.request = answer;
        target.backstop = backstop;
      }
    }
    if (abandoned) {
      giveUp(answer, backstop);
    }
    answer.whenComplete(
        (apps, error) -> {
          if (backstop != null) {
            backstop.cancel(false);
          }
          slots.release();
          try {
            scheduler.execute(() -> finish(target, apps, error));
          } catch (RejectedExecutionException e) {
            // The agent is shutting down.
            synchronized (lock) {
              target.busy = false;
              inFlight--;
            }
          }
        });
  }

  private static void giveUp(CompletableFuture<?> request, ScheduledFuture<?> backstop) {
    if (backstop != null) {
      backstop.cancel(false);
    }
    request.completeExceptionally(new CancellationException("discovery closed"));
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
    List<Target> start;
    synchronized (lock) {
      target.busy = false;
      target.request = null;
      target.backstop = null;
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
      start = dispatch();
      report();
    }
    start.forEach(this::request);
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
    List<Runnable> giveUps = new ArrayList<>();
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      for (Target target : targets) {
        if (target.next != null) {
          target.next.cancel(false);
        }
        if (target.request != null) {
          CompletableFuture<?> request = target.request;
          ScheduledFuture<?> backstop = target.backstop;
          giveUps.add(() -> giveUp(request, backstop));
        }
      }
      waiting.clear();
    }
    slots.forget(waiter);
    // Given up now rather than at their deadline: their slots go back to the handler and the
    // finder lets their clients go while the shared transport still runs.
    giveUps.forEach(Runnable::run);
    onClose.run();
  }
}
