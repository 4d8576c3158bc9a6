package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.format.DateTimeFormatter;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * {@link Events} as core/v1 Kubernetes Events, correlated the way the kubelet's event recorder does
 * it: an occurrence identical to one recorded within the last {@code window} (same object, type,
 * reason and message) increments {@code count} and moves {@code lastTimestamp} on the existing
 * Event instead of creating another, so a flapping device does not flood the namespace.
 *
 * <p>Events go to the object's namespace ({@code default} for cluster-scoped objects), named {@code
 * <object>.<hex nanoseconds>} like the kubelet's, with {@code source.component} and {@code
 * reportingComponent} {@value #COMPONENT} and {@code source.host} / {@code reportingInstance} the
 * node name. No {@code eventTime} is set, so the API server validates them as legacy core/v1
 * Events.
 *
 * <p>Memory is bounded: at most {@code maxKeys} distinct occurrences are remembered (least recently
 * used forgotten first). The window should stay below the API server's event TTL (one hour by
 * default); when the remembered Event has gone anyway (404), a new one is created.
 *
 * <p>Threading: {@link #normal} and {@link #warning} only hand the write to the injected executor
 * and return. Writes are serialised by this recorder; a failed write (API unavailable, forbidden, a
 * rejected task) is logged and dropped, never thrown. The executor is owned by the caller.
 */
public final class EventRecorder implements Events {

  /** {@code source.component} and {@code reportingComponent} of every Event. */
  public static final String COMPONENT = "jakri-agent";

  /** Default correlation window: well inside the API server's default one-hour event TTL. */
  public static final Duration DEFAULT_WINDOW = Duration.ofMinutes(10);

  /** Default number of distinct occurrences remembered for correlation. */
  public static final int DEFAULT_MAX_KEYS = 1_000;

  // events.k8s.io/v1 caps note at 1 kB and reason at 128 characters; keep core/v1 Events within
  // the same limits so they survive a later migration and never grow without bound.
  static final int MAX_MESSAGE = 1024;
  static final int MAX_REASON = 128;

  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final String NORMAL = "Normal";
  private static final String WARNING = "Warning";
  // Event names are DNS subdomains (at most 253 characters): "<object>." plus 16 hex digits.
  private static final int MAX_OBJECT_NAME_IN_EVENT_NAME = 253 - 17;

  private final KubernetesClient client;
  private final String nodeName;
  private final Executor executor;
  private final Clock clock;
  private final Duration window;
  private final Map<Key, Recorded> recorded;
  private long lastNanos;

  /** With {@link #DEFAULT_WINDOW} and {@link #DEFAULT_MAX_KEYS}. */
  public EventRecorder(KubernetesClient client, String nodeName, Executor executor, Clock clock) {
    this(client, nodeName, executor, clock, DEFAULT_WINDOW, DEFAULT_MAX_KEYS);
  }

  /**
   * @param executor runs the API writes; {@code Runnable::run} makes calls synchronous
   * @param window how long after the last occurrence a repeat still counts on the same Event
   * @param maxKeys how many distinct occurrences are remembered
   */
  public EventRecorder(
      KubernetesClient client,
      String nodeName,
      Executor executor,
      Clock clock,
      Duration window,
      int maxKeys) {
    this.client = Objects.requireNonNull(client, "client");
    this.nodeName = Objects.requireNonNull(nodeName, "nodeName");
    this.executor = Objects.requireNonNull(executor, "executor");
    this.clock = Objects.requireNonNull(clock, "clock");
    this.window = Objects.requireNonNull(window, "window");
    if (window.isNegative() || maxKeys < 1) {
      throw new IllegalArgumentException("window must not be negative and maxKeys at least 1");
    }
    this.recorded =
        new LinkedHashMap<>(16, 0.75f, true) {
          private static final long serialVersionUID = 1L;

          @Override
          protected boolean removeEldestEntry(Map.Entry<Key, Recorded> eldest) {
            return size() > maxKeys;
          }
        };
  }

  @Override
  public void normal(ObjectRef ref, String reason, String message) {
    submit(ref, NORMAL, reason, message);
  }

  @Override
  public void warning(ObjectRef ref, String reason, String message) {
    submit(ref, WARNING, reason, message);
  }

  private void submit(ObjectRef ref, String type, String reason, String message) {
    Key key =
        new Key(
            Objects.requireNonNull(ref, "ref"),
            type,
            truncate(Objects.requireNonNull(reason, "reason"), MAX_REASON),
            truncate(Objects.requireNonNull(message, "message"), MAX_MESSAGE));
    try {
      executor.execute(() -> write(key));
    } catch (RejectedExecutionException e) {
      LOG.debug("{} event {} about {} dropped: executor rejected it", type, reason, ref);
    }
  }

  private synchronized void write(Key key) {
    try {
      Instant now = clock.instant();
      Recorded previous = recorded.get(key);
      if (previous != null
          && !now.isAfter(previous.last().plus(window))
          && increment(key, previous, now)) {
        return;
      }
      create(key, now);
    } catch (RuntimeException e) {
      // Best effort by contract: a closed client or a bug in serialisation must not escape into
      // the caller's executor.
      LOG.warn(
          "{} event {} about {} not recorded: {}",
          key.type(),
          key.reason(),
          key.ref(),
          e.toString());
    }
  }

  /** Returns false when the Event is gone (a new one must be created). */
  private boolean increment(Key key, Recorded previous, Instant now) {
    int count = previous.count() + 1;
    Map<String, Object> patch = Map.of("count", count, "lastTimestamp", timestamp(now));
    try {
      client
          .v1()
          .events()
          .inNamespace(previous.namespace())
          .withName(previous.name())
          .patch(
              PatchContext.of(PatchType.JSON_MERGE),
              client.getKubernetesSerialization().asJson(patch));
      recorded.put(key, new Recorded(previous.namespace(), previous.name(), count, now));
      return true;
    } catch (KubernetesClientException e) {
      if (e.getCode() == 404) {
        recorded.remove(key);
        return false;
      }
      LOG.warn(
          "{} event {} about {}: count {} not recorded: {}",
          key.type(),
          key.reason(),
          key.ref(),
          count,
          KubernetesInstanceStore.describe(e));
      return true;
    }
  }

  private void create(Key key, Instant now) {
    ObjectRef ref = key.ref();
    String namespace = ref.namespace().isEmpty() ? "default" : ref.namespace();
    // Two attempts: a name can only clash with an Event another agent made for the same object in
    // the same nanosecond.
    for (int attempt = 1; attempt <= 2; attempt++) {
      String name = eventName(ref.name(), now);
      Event event =
          new EventBuilder()
              .withNewMetadata()
              .withName(name)
              .withNamespace(namespace)
              .endMetadata()
              .withNewInvolvedObject()
              .withApiVersion(ref.apiVersion())
              .withKind(ref.kind())
              .withNamespace(ref.namespace().isEmpty() ? null : ref.namespace())
              .withName(ref.name())
              .withUid(ref.uid().isEmpty() ? null : ref.uid())
              .endInvolvedObject()
              .withType(key.type())
              .withReason(key.reason())
              .withMessage(key.message())
              .withCount(1)
              .withFirstTimestamp(timestamp(now))
              .withLastTimestamp(timestamp(now))
              .withNewSource()
              .withComponent(COMPONENT)
              .withHost(nodeName)
              .endSource()
              .withReportingComponent(COMPONENT)
              .withReportingInstance(nodeName)
              .build();
      try {
        client.v1().events().inNamespace(namespace).resource(event).create();
        recorded.put(key, new Recorded(namespace, name, 1, now));
        return;
      } catch (KubernetesClientException e) {
        if (e.getCode() != 409 || attempt == 2) {
          LOG.warn(
              "{} event {} about {} not recorded: {}",
              key.type(),
              key.reason(),
              ref,
              KubernetesInstanceStore.describe(e));
          return;
        }
      }
    }
  }

  /** {@code <object>.<hex nanoseconds>}, strictly increasing per recorder. */
  private String eventName(String objectName, Instant now) {
    long nanos = now.getEpochSecond() * 1_000_000_000L + now.getNano();
    nanos = Math.max(nanos, lastNanos + 1);
    lastNanos = nanos;
    String base =
        objectName.length() > MAX_OBJECT_NAME_IN_EVENT_NAME
            ? objectName.substring(0, MAX_OBJECT_NAME_IN_EVENT_NAME)
            : objectName;
    return base + "." + Long.toHexString(nanos);
  }

  private static String timestamp(Instant instant) {
    // core/v1 Event timestamps are RFC 3339 with whole seconds.
    return DateTimeFormatter.ISO_INSTANT.format(instant.truncatedTo(ChronoUnit.SECONDS));
  }

  private static String truncate(String text, int max) {
    return text.length() <= max ? text : text.substring(0, max - 3) + "...";
  }

  /** What makes two occurrences the same Event. */
  private record Key(ObjectRef ref, String type, String reason, String message) {}

  /** The Event an occurrence went to, and how often it has happened. */
  private record Recorded(String namespace, String name, int count, Instant last) {}
}
