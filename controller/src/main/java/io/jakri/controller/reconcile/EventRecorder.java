package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.api.model.EventBuilder;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.time.Clock;
import java.time.temporal.ChronoUnit;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emits core/v1 Warning Events about an object ({@code kubectl describe} shows them). The same
 * reason and message about the same object is emitted once (remembered for the last 1024 distinct
 * ones), so a retried failure does not flood the API server. Failures to emit are logged, never
 * thrown. Thread-safe.
 */
public final class EventRecorder {

  private static final Logger LOG = LoggerFactory.getLogger(EventRecorder.class);
  private static final int REMEMBERED = 1024;

  private final KubernetesClient client;
  private final String namespace;
  private final Clock clock;
  private final AtomicLong sequence = new AtomicLong();
  private final Map<String, Boolean> sent =
      new LinkedHashMap<>(16, 0.75f, true) {
        private static final long serialVersionUID = 1L;

        @Override
        protected boolean removeEldestEntry(Map.Entry<String, Boolean> eldest) {
          return size() > REMEMBERED;
        }
      };

  public EventRecorder(KubernetesClient client, String namespace, Clock clock) {
    this.client = client;
    this.namespace = namespace;
    this.clock = clock;
  }

  /** Emits a Warning Event about {@code about}, unless this exact one was emitted already. */
  public void warn(HasMetadata about, String reason, String message) {
    String key = about.getMetadata().getUid() + "\n" + reason + "\n" + message;
    synchronized (sent) {
      if (sent.put(key, Boolean.TRUE) != null) {
        return;
      }
    }
    String now = clock.instant().truncatedTo(ChronoUnit.SECONDS).toString();
    Event event =
        new EventBuilder()
            .withNewMetadata()
            .withName(
                about.getMetadata().getName()
                    + "."
                    + Long.toHexString(clock.millis())
                    + Long.toHexString(sequence.incrementAndGet()))
            .withNamespace(namespace)
            .endMetadata()
            .withNewInvolvedObject()
            .withApiVersion(about.getApiVersion())
            .withKind(about.getKind())
            .withName(about.getMetadata().getName())
            .withNamespace(about.getMetadata().getNamespace())
            .withUid(about.getMetadata().getUid())
            .withResourceVersion(about.getMetadata().getResourceVersion())
            .endInvolvedObject()
            .withType("Warning")
            .withReason(reason)
            .withMessage(message.length() > 1024 ? message.substring(0, 1024) : message)
            .withCount(1)
            .withFirstTimestamp(now)
            .withLastTimestamp(now)
            .withNewSource()
            .withComponent("jakri-controller")
            .endSource()
            .withReportingComponent("jakri-controller")
            .build();
    try {
      client.v1().events().inNamespace(namespace).resource(event).create();
    } catch (KubernetesClientException e) {
      LOG.warn(
          "cannot emit event {} about {}: {}",
          reason,
          about.getMetadata().getName(),
          e.getMessage());
      synchronized (sent) {
        sent.remove(key);
      }
    }
  }
}
