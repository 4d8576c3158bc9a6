package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.controller.broker.BrokerLabels;
import java.net.HttpURLConnection;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The controller's writes of broker objects: create (an existing object of the same name counts as
 * success: names are deterministic, so it is ours), update a Service in place, delete (a missing
 * object counts as success). Every write is one request. A create the API server refuses as invalid
 * or forbidden becomes a {@link Rejected} naming the offending fields or the reason. Thread-safe.
 */
final class Writes {

  private static final Logger LOG = LoggerFactory.getLogger(Writes.class);

  /**
   * The API server refused an object: as invalid (400 or 422; the message names fields, reason
   * {@link InstanceReconciler#REJECTED}) or as forbidden (403, e.g. by admission: a Pod in a
   * namespace without the ServiceAccount it runs as; reason {@link InstanceReconciler#FORBIDDEN}).
   */
  static final class Rejected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String reason;
    private final String summary;

    Rejected(String kind, String name, String reason, String fields, Throwable cause) {
      super(kind + " " + name + " rejected by the API server: " + fields, cause);
      this.reason = reason;
      this.summary = kind + " rejected by the API server: " + fields;
    }

    /** The reason of the condition and Event. */
    String reason() {
      return reason;
    }

    /** The message without the object's name: the same for every Instance of a Configuration. */
    String summary() {
      return summary;
    }
  }

  /** A refusal of {@code object} as {@link Rejected}, if it is one (400, 403, 422). */
  static Optional<Rejected> refusal(HasMetadata object, KubernetesClientException e) {
    int code = e.getCode();
    if (code == 422 || code == HttpURLConnection.HTTP_BAD_REQUEST) {
      return Optional.of(
          new Rejected(kind(object), name(object), InstanceReconciler.REJECTED, describe(e), e));
    }
    if (code == HttpURLConnection.HTTP_FORBIDDEN) {
      // 'pods "x-pod" is forbidden: ...': the name left out, so all Instances read the same.
      String why = describe(e).replaceFirst("^\\S+ \"[^\"]*\" is forbidden: ", "forbidden: ");
      return Optional.of(
          new Rejected(kind(object), name(object), InstanceReconciler.FORBIDDEN, why, e));
    }
    return Optional.empty();
  }

  private final KubernetesClient client;
  private final String namespace;
  private final InFlightCreates inFlight;

  Writes(KubernetesClient client, String namespace, InFlightCreates inFlight) {
    this.client = client;
    this.namespace = namespace;
    this.inFlight = inFlight;
  }

  /**
   * Creates {@code object}; returns normally when it already exists or a create of it is still
   * waiting for its informer event ({@link InFlightCreates}).
   */
  void create(HasMetadata object) {
    if (!inFlight.begin(object)) {
      LOG.debug("{}({}/{}) create in flight", kind(object), namespace, name(object));
      return;
    }
    try {
      client.resource(object).inNamespace(namespace).create();
      LOG.info("{}({}/{}) created", kind(object), namespace, name(object));
    } catch (KubernetesClientException e) {
      inFlight.done(object);
      if (e.getCode() == HttpURLConnection.HTTP_CONFLICT) {
        LOG.debug("{}({}/{}) already exists", kind(object), namespace, name(object));
        return;
      }
      throw refusal(object, e).orElseThrow(() -> e);
    }
  }

  /**
   * Replaces the spec, labels and annotations of an existing managed Service with {@code
   * desired}'s, keeping the cluster IPs the API server allocated (they are immutable).
   */
  void updateService(Service observed, Service desired) {
    Service next = client.getKubernetesSerialization().clone(observed);
    next.getMetadata().setLabels(desired.getMetadata().getLabels());
    next.getMetadata().setAnnotations(desired.getMetadata().getAnnotations());
    var spec = client.getKubernetesSerialization().clone(desired.getSpec());
    spec.setClusterIP(observed.getSpec() == null ? null : observed.getSpec().getClusterIP());
    spec.setClusterIPs(observed.getSpec() == null ? null : observed.getSpec().getClusterIPs());
    next.setSpec(spec);
    try {
      client.resource(next).inNamespace(namespace).update();
      LOG.info("Service({}/{}) updated", namespace, name(next));
    } catch (KubernetesClientException e) {
      throw refusal(next, e).orElseThrow(() -> e);
    }
  }

  /**
   * Deletes {@code object} (dependents in the background), unless it is already being deleted or
   * does not carry the controller's {@link BrokerLabels#MANAGED_BY} label.
   */
  void delete(HasMetadata object, String why) {
    if (object.getMetadata().getDeletionTimestamp() != null || !managed(object)) {
      return;
    }
    client
        .resource(object)
        .inNamespace(namespace)
        .withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND)
        .delete();
    LOG.info("{}({}/{}) deleted: {}", kind(object), namespace, name(object), why);
  }

  /** A JSON patch of a custom resource's status subresource. */
  void patchStatus(Class<? extends HasMetadata> type, String name, List<Map<String, Object>> ops) {
    String json = client.getKubernetesSerialization().asJson(ops);
    client
        .resources(type)
        .inNamespace(namespace)
        .withName(name)
        .subresource("status")
        .patch(PatchContext.of(PatchType.JSON), json);
  }

  static boolean managed(HasMetadata object) {
    Map<String, String> labels = object.getMetadata().getLabels();
    return labels != null && BrokerLabels.CONTROLLER.equals(labels.get(BrokerLabels.MANAGED_BY));
  }

  /**
   * The API server's message with each cause's field, e.g. {@code spec.containers[0].image:
   * Required value}.
   */
  static String describe(KubernetesClientException e) {
    List<String> parts = new ArrayList<>();
    Optional.ofNullable(e.getStatus())
        .map(s -> s.getDetails())
        .map(d -> d.getCauses())
        .ifPresent(
            causes -> {
              for (StatusCause c : causes) {
                parts.add(
                    Optional.ofNullable(c.getField()).map(f -> f + ": ").orElse("")
                        + Optional.ofNullable(c.getMessage()).orElse(c.getReason()));
              }
            });
    if (parts.isEmpty()) {
      return Optional.ofNullable(e.getStatus())
          .map(s -> s.getMessage())
          .orElse(String.valueOf(e.getMessage()));
    }
    return String.join("; ", parts);
  }

  private static String kind(HasMetadata o) {
    return o.getKind() == null ? o.getClass().getSimpleName() : o.getKind();
  }

  private static String name(HasMetadata o) {
    return o.getMetadata().getName();
  }
}
