package io.jakri.handler.coap;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running coap discovery for one Configuration: rounds, one after the other. A round asks (the
 * {@link Prober}), keeps each answering endpoint's links that pass the {@link LinkFilter}, and
 * reports the snapshot when it changed (and after the first round). An endpoint whose answer keeps
 * no link leaves at once; one that does not answer (or answers unusably) stays for the grace period
 * after its last good answer, then leaves.
 *
 * <p>Threading: no thread of its own; rounds run on the scheduler and never overlap (the next is
 * scheduled when one ends). State is guarded by one lock, held while reporting, so no snapshot
 * follows {@link #close()}. Warnings about what endpoints send are logged once per distinct reason
 * (at most {@value #MAX_REASONS} remembered), later ones at debug.
 */
final class CoapDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(CoapDiscovery.class);
  static final int MAX_REASONS = 256;

  private final String configuration;
  private final CoapDetails details;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final Prober prober;
  private final LongSupplier nanos;

  private final Object lock = new Object();
  // guarded by lock
  private boolean closed;
  private ScheduledFuture<?> next;
  private final Map<String, Seen> devices = new TreeMap<>();
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();
  private final Set<String> warned = new HashSet<>();

  private record Seen(DiscoveredDevice device, long lastAnswerNanos) {}

  CoapDiscovery(
      String configuration,
      CoapDetails details,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      Prober prober,
      LongSupplier nanos) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.prober = Objects.requireNonNull(prober, "prober");
    this.nanos = Objects.requireNonNull(nanos, "nanos");
  }

  void start() {
    schedule(0);
  }

  private void schedule(long delayMillis) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      try {
        next = scheduler.schedule(this::round, delayMillis, TimeUnit.MILLISECONDS);
      } catch (RejectedExecutionException e) {
        LOG.debug("coap({}): scheduler shut down, discovery stops", configuration);
      }
    }
  }

  private void round() {
    synchronized (lock) {
      if (closed) {
        return;
      }
    }
    prober
        .ask(details.hosts(), details.responseTimeout())
        .whenComplete(
            (answers, error) -> {
              try {
                settle(
                    error == null
                        ? answers
                        : new Prober.Answers(
                            Map.of(),
                            Map.of(),
                            List.of(String.valueOf(unwrap(error).getMessage()))));
              } catch (RuntimeException e) {
                LOG.warn("coap({}): discovery round failed", configuration, e);
              }
              schedule(details.discoveryInterval().toMillis());
            });
  }

  private static Throwable unwrap(Throwable t) {
    return t instanceof java.util.concurrent.CompletionException && t.getCause() != null
        ? t.getCause()
        : t;
  }

  /** Applies one round's answers and reports. Package-private for tests. */
  void settle(Prober.Answers round) {
    synchronized (lock) {
      if (closed) {
        return;
      }
      long now = nanos.getAsLong();
      round.sendErrors().forEach(e -> warnOnce("GET not sent", e));
      round.problems().forEach((reason, count) -> warnOnce("answers ignored", reason));
      Set<String> answered = new HashSet<>();
      round
          .answers()
          .forEach(
              (endpoint, answer) -> {
                if (answer instanceof Prober.Answer.Refused r) {
                  warnOnce("answer of " + endpoint.id() + " unusable", r.reason());
                } else if (answer instanceof Prober.Answer.Links l) {
                  l.result()
                      .malformed()
                      .forEach(
                          m ->
                              warnOnce(
                                  "malformed link from " + endpoint.id(),
                                  m.replaceFirst("^link at character \\d+: ", "")));
                  if (l.result().dropped() > 0) {
                    warnOnce(
                        "links of " + endpoint.id(),
                        "more than " + LinkFormat.MAX_LINKS + " links, the rest ignored");
                  }
                  List<Link> kept =
                      l.result().links().stream().filter(details.filter()::keeps).toList();
                  answered.add(endpoint.id());
                  if (kept.isEmpty()) {
                    if (devices.remove(endpoint.id()) != null) {
                      LOG.info(
                          "coap({}): endpoint {} has no matching link now",
                          configuration,
                          endpoint.id());
                    }
                  } else {
                    DiscoveredDevice device = CoapDevices.device(endpoint, kept);
                    Seen before = devices.put(endpoint.id(), new Seen(device, now));
                    if (before == null) {
                      LOG.info(
                          "coap({}): endpoint appeared: {} ({} links)",
                          configuration,
                          endpoint.id(),
                          kept.size());
                    }
                  }
                }
              });
      long grace = details.gracePeriod().toNanos();
      devices
          .entrySet()
          .removeIf(
              e -> {
                boolean gone =
                    !answered.contains(e.getKey()) && now - e.getValue().lastAnswerNanos() >= grace;
                if (gone) {
                  LOG.info("coap({}): endpoint left: {}", configuration, e.getKey());
                }
                return gone;
              });
      report();
    }
  }

  // Holding lock.
  private void warnOnce(String what, String reason) {
    // The reason alone decides: a flood of endpoints sending the same garbage warns once.
    String key = reason;
    if (warned.size() < MAX_REASONS && warned.add(key)) {
      LOG.warn("coap({}): {}: {} (logged once per reason)", configuration, what, reason);
    } else {
      LOG.debug("coap({}): {}: {}", configuration, what, reason);
    }
  }

  // Holding lock.
  private void report() {
    List<DiscoveredDevice> snapshot = new ArrayList<>();
    devices.values().forEach(s -> snapshot.add(s.device()));
    if (lastReported.isPresent() && lastReported.get().equals(snapshot)) {
      return;
    }
    lastReported = Optional.of(snapshot);
    try {
      listener.devices(snapshot);
    } catch (RuntimeException e) {
      LOG.warn("coap({}): device listener failed", configuration, e);
    }
  }

  @Override
  public void close() {
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      if (next != null) {
        next.cancel(false);
      }
    }
    prober.close(); // a round in flight closes its sockets now; its answers are not reported
  }
}
