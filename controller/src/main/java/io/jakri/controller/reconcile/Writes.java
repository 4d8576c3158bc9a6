package io.jakri.controller.reconcile;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.Service;
import io.fabric8.kubernetes.api.model.StatusCause;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.fabric8.kubernetes.client.dsl.base.PatchContext;
import io.fabric8.kubernetes.client.dsl.base.PatchType;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.objects.InstanceObjects;
import io.jakri.controller.objects.ServedResource;
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

  /** The field manager of the controller's server-side applies. */
  static final String FIELD_MANAGER = "jakri-controller";

  /**
   * The API server refused an object: as invalid (400 or 422; the message names fields, reason
   * {@link InstanceReconciler#REJECTED}) or as forbidden (403, e.g. by admission: a Pod in a
   * namespace without the ServiceAccount it runs as; reason {@link InstanceReconciler#FORBIDDEN}).
   */
  static final class Rejected extends RuntimeException {
    private static final long serialVersionUID = 1L;

    private final String reason;
    private final String summary;

    /** A refusal of the controller's own (no request was made): {@code message} as it is. */
    Rejected(String reason, String message) {
      super(message);
      this.reason = reason;
      this.summary = message;
    }

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
      if (why.isBlank() || why.equals("forbidden: ")) {
        why =
            "forbidden (HTTP 403) by the API server, without a reason; check the controller's RBAC";
      }
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

  /**
   * Creates an instance object with a server-side apply as field manager {@value #FIELD_MANAGER}
   * (so that later applies own every field and can drop what a template drops), after one GET: an
   * existing object of that name that is the controller's (same {@code akri.sh/instance} label) is
   * left for the cache to deliver; any other is a {@link Rejected} with reason {@link
   * InstanceObjects#CONFLICT}: the controller never takes over what it did not create. (An object
   * created by someone else between the GET and the apply would be taken over: a window of one
   * round trip.)
   */
  void createObject(ServedResource where, GenericKubernetesResource object) {
    if (!inFlight.begin(object)) {
      return;
    }
    var resources = objects(where, object);
    try {
      GenericKubernetesResource existing = resources.withName(name(object)).get();
      if (existing != null) {
        inFlight.done(object);
        String instance = object.getMetadata().getLabels().get(BrokerLabels.INSTANCE);
        if (managed(existing)
            && instance.equals(existing.getMetadata().getLabels().get(BrokerLabels.INSTANCE))) {
          return;
        }
        throw new Rejected(
            InstanceObjects.CONFLICT,
            kind(object)
                + " "
                + name(object)
                + " exists and is not this Instance's (no "
                + BrokerLabels.MANAGED_BY
                + "="
                + BrokerLabels.CONTROLLER
                + " label for it); the controller leaves it alone");
      }
      resources.resource(object).fieldManager(FIELD_MANAGER).forceConflicts().serverSideApply();
      LOG.info("{}({}) created", kind(object), where(object));
    } catch (KubernetesClientException e) {
      inFlight.done(object);
      throw refusal(object, e).orElseThrow(() -> e);
    }
  }

  /**
   * Brings an existing instance object of the controller's to {@code desired} with a server-side
   * apply as field manager {@value #FIELD_MANAGER}: fields the API server or others own (a
   * Service's cluster IP, a Deployment's defaults) are kept, fields dropped from the template go.
   */
  void applyObject(ServedResource where, GenericKubernetesResource desired) {
    try {
      objects(where, desired)
          .resource(desired)
          .fieldManager(FIELD_MANAGER)
          .forceConflicts()
          .serverSideApply();
      LOG.info("{}({}) updated", kind(desired), where(desired));
    } catch (KubernetesClientException e) {
      throw refusal(desired, e).orElseThrow(() -> e);
    }
  }

  /** Deletes an instance object of the controller's (see {@link #delete}). */
  void deleteObject(ServedResource where, GenericKubernetesResource object, String why) {
    if (object.getMetadata().getDeletionTimestamp() != null || !managed(object)) {
      return;
    }
    objects(where, object)
        .withName(name(object))
        .withPropagationPolicy(io.fabric8.kubernetes.api.model.DeletionPropagation.BACKGROUND)
        .delete();
    LOG.info("{}({}) deleted: {}", kind(object), where(object), why);
  }

  private io.fabric8.kubernetes.client.dsl.NonNamespaceOperation<
          GenericKubernetesResource,
          io.fabric8.kubernetes.api.model.GenericKubernetesResourceList,
          io.fabric8.kubernetes.client.dsl.Resource<GenericKubernetesResource>>
      objects(ServedResource where, GenericKubernetesResource object) {
    var all = client.genericKubernetesResources(where.context(object.getApiVersion()));
    return where.namespaced() ? all.inNamespace(namespace) : all;
  }

  private String where(HasMetadata o) {
    return o.getMetadata().getNamespace() == null
        ? name(o)
        : o.getMetadata().getNamespace() + "/" + name(o);
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
