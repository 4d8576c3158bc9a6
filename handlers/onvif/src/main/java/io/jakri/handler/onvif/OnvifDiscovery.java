package io.jakri.handler.onvif;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running onvif discovery for one Configuration: rounds of Akri's steps, one after the other.
 *
 * <ol>
 *   <li>probe, collect ProbeMatches for {@code discoveryTimeoutSeconds};
 *   <li>scope filter; each address in {@code XAddrs} is one candidate camera (url → uuid, the first
 *       answer for a url wins), at most {@value #MAX_CANDIDATES} per round;
 *   <li>unauthenticated {@code GetSystemDateAndTime} to every candidate: who does not answer is not
 *       there (so a camera that stops answering leaves, as in Akri);
 *   <li>only for cameras not there in the previous round: uuid filter, {@code GetNetworkInterfaces}
 *       (with the camera's credential), IP and MAC filters, then the device; a camera whose {@code
 *       GetNetworkInterfaces} failed (a timeout under load, say) is asked again every round until
 *       it answers, so its IP and MAC properties (and the IP and MAC filters) catch up;
 *   <li>report the snapshot when it changed (and after the first round), wait {@code
 *       discoveryIntervalSeconds}, start again.
 * </ol>
 *
 * <p>Threading: no thread of its own. Every step runs on the scheduler or the HTTP client's
 * callbacks (which run on the scheduler too); rounds never overlap, since the next is scheduled
 * only when one ends. State is guarded by one lock, held while reporting, so no snapshot follows
 * {@link #close()}. Requests of a round run in parallel, all bounded by one-second timeouts.
 */
final class OnvifDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(OnvifDiscovery.class);
  static final int MAX_CANDIDATES = 256;

  private final String configuration;
  private final OnvifDetails details;
  private final Credentials credentials;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final Prober prober;
  private final DeviceService service;

  private final Object lock = new Object();
  // guarded by lock
  private boolean closed;
  private Map<String, String> known = Map.of();
  // Known cameras whose GetNetworkInterfaces has not answered yet: asked again every round.
  private final Set<String> incomplete = new HashSet<>();
  private final Map<String, DiscoveredDevice> devices = new TreeMap<>();
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();
  private ScheduledFuture<?> next;
  private String lastProbeError = "";

  OnvifDiscovery(
      String configuration,
      OnvifDetails details,
      Credentials credentials,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      Prober prober,
      DeviceService service) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.credentials = Objects.requireNonNull(credentials, "credentials");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.prober = Objects.requireNonNull(prober, "prober");
    this.service = Objects.requireNonNull(service, "service");
  }

  /** Schedules the first round at once and returns. Call once. */
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
        LOG.debug("onvif({}): scheduler shut down, discovery stops", configuration);
      }
    }
  }

  private boolean isClosed() {
    synchronized (lock) {
      return closed;
    }
  }

  private void round() {
    if (isClosed()) {
      return;
    }
    prober
        .probe(details.probeType(), details.discoveryTimeout())
        .handle(
            (answers, error) -> {
              if (error != null) {
                String message = String.valueOf(error.getMessage());
                synchronized (lock) {
                  if (!message.equals(lastProbeError)) {
                    LOG.warn("onvif({}): probe not sent: {}", configuration, message);
                    lastProbeError = message;
                  }
                }
                return new Prober.Answers(List.of(), 0, 0, 0);
              }
              synchronized (lock) {
                lastProbeError = "";
              }
              return answers;
            })
        .thenCompose(this::checkResponsive)
        .thenCompose(this::queryNewCameras)
        .whenComplete(
            (ignored, error) -> {
              if (error != null) {
                LOG.warn("onvif({}): discovery round failed", configuration, error);
              }
              schedule(details.discoveryInterval().toMillis());
            });
  }

  /** Steps 2 and 3: candidates after the scope filter, then those answering. */
  private CompletableFuture<Map<String, String>> checkResponsive(Prober.Answers answers) {
    if (answers.dropped() > 0 || answers.rejected() > 0) {
      LOG.info(
          "onvif({}): probe answers: {} read, {} not acceptable XML, {} dropped over the limit",
          configuration,
          answers.datagrams(),
          answers.rejected(),
          answers.dropped());
    }
    Map<String, String> candidates = new LinkedHashMap<>();
    boolean full = false;
    for (ProbeMatch match : answers.matches()) {
      if (FilterList.filtersOut(
          details.scopes(), Optional.of(match.scopes()), FilterList.Match.ANY_WORD)) {
        continue;
      }
      for (String url : match.xaddrs()) {
        if (candidates.size() >= MAX_CANDIDATES && !candidates.containsKey(url)) {
          full = true;
          break;
        }
        candidates.putIfAbsent(url, match.uuid());
      }
    }
    if (full) {
      LOG.warn(
          "onvif({}): more than {} camera addresses answered; the rest are ignored this round",
          configuration,
          MAX_CANDIDATES);
    }
    Map<String, CompletableFuture<Boolean>> checks = new LinkedHashMap<>();
    for (String url : candidates.keySet()) {
      checks.put(
          url,
          service
              .systemDateAndTime(url)
              .handle(
                  (ok, error) -> {
                    if (error != null) {
                      LOG.debug(
                          "onvif({}): {} not responding: {}",
                          configuration,
                          url,
                          error.getMessage());
                    }
                    return error == null;
                  }));
    }
    return CompletableFuture.allOf(checks.values().toArray(CompletableFuture[]::new))
        .thenApply(
            v -> {
              Map<String, String> responsive = new LinkedHashMap<>();
              checks.forEach(
                  (url, check) -> {
                    if (check.join()) {
                      responsive.put(url, candidates.get(url));
                    }
                  });
              return responsive;
            });
  }

  /** Steps 4 and 5 for cameras new in this round; drops those that left; reports. */
  private CompletableFuture<Void> queryNewCameras(Map<String, String> responsive) {
    Map<String, String> fresh = new LinkedHashMap<>();
    synchronized (lock) {
      if (closed) {
        return CompletableFuture.completedFuture(null);
      }
      Map<String, String> latest = new HashMap<>();
      for (Map.Entry<String, String> e : responsive.entrySet()) {
        String known = this.known.get(e.getKey());
        if (known != null && !incomplete.contains(e.getKey())) {
          latest.put(e.getKey(), known); // not queried again while it stays
        } else {
          latest.put(e.getKey(), e.getValue());
          fresh.put(e.getKey(), e.getValue());
        }
      }
      for (String url : this.known.keySet()) {
        if (!latest.containsKey(url)) {
          incomplete.remove(url);
          DiscoveredDevice gone = devices.remove(url);
          if (gone != null) {
            LOG.info("onvif({}): camera left: {}", configuration, gone.id());
          }
        }
      }
      this.known = latest;
    }
    Map<String, CompletableFuture<Evaluation>> queries = new LinkedHashMap<>();
    fresh.forEach((url, uuid) -> queries.put(url, evaluate(url, uuid)));
    return CompletableFuture.allOf(queries.values().toArray(CompletableFuture[]::new))
        .thenRun(
            () -> {
              synchronized (lock) {
                if (closed) {
                  return;
                }
                queries.forEach((url, query) -> settle(url, query.join()));
                report();
              }
            });
  }

  /** What one camera's query gave: the device (if no filter left it out) and whether complete. */
  private record Evaluation(Optional<DiscoveredDevice> device, boolean complete) {}

  // Holding lock.
  private void settle(String url, Evaluation evaluation) {
    if (evaluation.complete()) {
      incomplete.remove(url);
    } else {
      incomplete.add(url);
    }
    Optional<DiscoveredDevice> device = evaluation.device();
    if (device.isEmpty()) {
      DiscoveredDevice dropped = devices.remove(url);
      if (dropped != null) {
        LOG.info("onvif({}): camera filtered out now: {}", configuration, dropped.id());
      }
      return;
    }
    DiscoveredDevice d = device.get();
    DiscoveredDevice before = devices.put(url, d);
    if (before == null) {
      LOG.info(
          "onvif({}): camera appeared: {} ({})",
          configuration,
          d.id(),
          d.properties().getOrDefault(OnvifDevices.IP_ADDRESS, "address unknown"));
    } else if (!before.equals(d)) {
      LOG.info(
          "onvif({}): camera {} answered GetNetworkInterfaces: {}",
          configuration,
          d.id(),
          d.properties().getOrDefault(OnvifDevices.IP_ADDRESS, "address unknown"));
    }
  }

  /** Akri's {@code apply_filters}: the device, or empty when a filter leaves the camera out. */
  private CompletableFuture<Evaluation> evaluate(String url, String uuid) {
    if (FilterList.filtersOut(
        details.uuids(), Optional.of(List.of(uuid)), FilterList.Match.IGNORE_CASE)) {
      return CompletableFuture.completedFuture(new Evaluation(Optional.empty(), true));
    }
    boolean askedBefore;
    synchronized (lock) {
      askedBefore = incomplete.contains(url);
    }
    return service
        .networkInterfaces(url, credentials.forUuid(uuid))
        .handle(
            (ipAndMac, error) -> {
              if (error != null && askedBefore) {
                LOG.debug(
                    "onvif({}): GetNetworkInterfaces of {} failed again: {}",
                    configuration,
                    url,
                    String.valueOf(error.getMessage()));
              } else if (error != null) {
                LOG.warn(
                    "onvif({}): GetNetworkInterfaces of {} failed: {}",
                    configuration,
                    url,
                    error instanceof java.util.concurrent.CompletionException c
                            && c.getCause() != null
                        ? c.getCause().getMessage()
                        : error.getMessage() + "; asking again every round");
              }
              Optional<DeviceService.IpAndMac> found =
                  error == null ? Optional.of(ipAndMac) : Optional.empty();
              if (FilterList.filtersOut(
                  details.ipAddresses(),
                  found.map(a -> List.of(a.ip())),
                  FilterList.Match.IGNORE_CASE)) {
                return new Evaluation(Optional.empty(), found.isPresent());
              }
              if (FilterList.filtersOut(
                  details.macAddresses(),
                  found.map(a -> List.of(a.mac())),
                  FilterList.Match.IGNORE_CASE)) {
                return new Evaluation(Optional.empty(), found.isPresent());
              }
              return new Evaluation(
                  Optional.of(OnvifDevices.device(url, uuid, found)), found.isPresent());
            });
  }

  // Holding lock.
  private void report() {
    List<DiscoveredDevice> snapshot = new ArrayList<>(devices.values());
    if (lastReported.isPresent() && lastReported.get().equals(snapshot)) {
      return;
    }
    lastReported = Optional.of(snapshot);
    try {
      listener.devices(snapshot);
    } catch (RuntimeException e) {
      LOG.warn("onvif({}): device listener failed", configuration, e);
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
  }
}
