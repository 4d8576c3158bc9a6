package io.jakri.controller.objects;

import io.fabric8.kubernetes.api.model.GenericKubernetesResource;
import io.fabric8.kubernetes.api.model.ObjectMeta;
import io.fabric8.kubernetes.api.model.OwnerReferenceBuilder;
import io.fabric8.kubernetes.client.utils.KubernetesSerialization;
import io.jakri.controller.broker.BrokerLabels;
import io.jakri.controller.broker.BrokerNames;
import io.jakri.crd.Configuration;
import io.jakri.crd.Instance;
import io.jakri.crd.InstanceObjectPlaceholders;
import io.jakri.crd.InstanceObjectPlaceholders.Unrenderable;
import io.jakri.crd.InstanceObjectPlaceholders.Values;
import io.jakri.crd.InstanceObjectTemplate;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * Renders a Configuration's {@code spec.instanceObjects} for one Instance: each template with its
 * placeholders replaced ({@link InstanceObjectPlaceholders}), in the Instance's namespace (none for
 * a cluster-scoped kind), labelled {@code app.kubernetes.io/managed-by}, {@code
 * akri.sh/configuration}, {@code akri.sh/instance} (and {@code akri.sh/instance-namespace} when
 * cluster-scoped), annotated with a hash of the rendered object, and owned by the Instance when
 * namespaced (a namespaced owner cannot own a cluster-scoped object; those are deleted explicitly).
 * Pure: inputs are not modified; the same inputs give equal objects. Thread-safe.
 */
public final class InstanceObjects {

  /** A template of a kind the controller may not create. */
  public static final String NOT_ALLOWED = "InstanceObjectNotAllowed";

  /** A template that cannot be rendered for an Instance (a property it does not have). */
  public static final String UNRENDERED = "InstanceObjectUnrendered";

  /** An object of that name exists and is not the controller's. */
  public static final String CONFLICT = "InstanceObjectConflict";

  /** The label that tells a cluster-scoped object's Instance namespace. */
  public static final String INSTANCE_NAMESPACE = "akri.sh/instance-namespace";

  /** One template's outcome for one Instance. */
  public sealed interface Desired permits Desired.Rendered, Desired.Refused {
    /** Where it goes and what it is. */
    record Rendered(ServedResource where, GenericKubernetesResource object) implements Desired {}

    /** Why it is not created; {@code reason} is a condition reason. */
    record Refused(int index, String reason, String message) implements Desired {}
  }

  private final KubernetesSerialization serialization;
  private final Supplier<ObjectKinds> kinds;

  /**
   * @param kinds the kinds allowed and served; read at each render (the controller resolves them
   *     once, before its caches start)
   */
  public InstanceObjects(KubernetesSerialization serialization, Supplier<ObjectKinds> kinds) {
    this.serialization = serialization;
    this.kinds = kinds;
  }

  /** Whether the Configuration lists any instance objects. */
  public static boolean any(Configuration configuration) {
    return configuration.getSpec() != null
        && configuration.getSpec().getInstanceObjects() != null
        && !configuration.getSpec().getInstanceObjects().isEmpty();
  }

  /** The Configuration's templates rendered for {@code instance}, in template order. */
  public List<Desired> render(Configuration configuration, Instance instance) {
    if (!any(configuration)) {
      return List.of();
    }
    String name = instance.getMetadata().getName();
    String namespace = instance.getMetadata().getNamespace();
    Values values =
        new Values(
            name,
            configuration.getMetadata().getName(),
            namespace,
            Optional.ofNullable(instance.getSpec().getNodes()).orElse(List.of()),
            Optional.ofNullable(instance.getSpec().getBrokerProperties()).orElse(Map.of()));
    List<Desired> out = new ArrayList<>();
    List<InstanceObjectTemplate> templates = configuration.getSpec().getInstanceObjects();
    for (int i = 0; i < templates.size(); i++) {
      InstanceObjectTemplate t = templates.get(i);
      if (t == null || t.getApiVersion() == null || t.getKind() == null) {
        out.add(new Desired.Refused(i, UNRENDERED, "apiVersion and kind are required"));
        continue;
      }
      ObjectKinds.Lookup where = kinds.get().lookup(t.getApiVersion(), t.getKind());
      if (where instanceof ObjectKinds.Lookup.Refused r) {
        out.add(new Desired.Refused(i, NOT_ALLOWED, "instanceObjects[" + i + "]: " + r.message()));
        continue;
      }
      ServedResource served = ((ObjectKinds.Lookup.Served) where).resource();
      Map<String, Object> rendered;
      try {
        rendered = InstanceObjectPlaceholders.render(t.toMap(), values);
      } catch (Unrenderable e) {
        out.add(
            new Desired.Refused(i, UNRENDERED, "instanceObjects[" + i + "]: " + e.getMessage()));
        continue;
      }
      GenericKubernetesResource object =
          serialization.convertValue(rendered, GenericKubernetesResource.class);
      ObjectMeta meta = Optional.ofNullable(object.getMetadata()).orElseGet(ObjectMeta::new);
      Map<String, String> labels =
          new LinkedHashMap<>(Optional.ofNullable(meta.getLabels()).orElse(Map.of()));
      labels.put(BrokerLabels.MANAGED_BY, BrokerLabels.CONTROLLER);
      labels.put(BrokerLabels.CONFIGURATION, configuration.getMetadata().getName());
      labels.put(BrokerLabels.INSTANCE, name);
      if (served.namespaced()) {
        meta.setNamespace(namespace);
        meta.setOwnerReferences(
            List.of(
                new OwnerReferenceBuilder()
                    .withApiVersion(instance.getApiVersion())
                    .withKind(instance.getKind())
                    .withName(name)
                    .withUid(instance.getMetadata().getUid())
                    .withController(true)
                    .withBlockOwnerDeletion(true)
                    .build()));
      } else {
        meta.setNamespace(null);
        labels.put(INSTANCE_NAMESPACE, namespace);
      }
      meta.setLabels(labels);
      Map<String, String> annotations =
          new LinkedHashMap<>(Optional.ofNullable(meta.getAnnotations()).orElse(Map.of()));
      annotations.remove(BrokerLabels.TEMPLATE_HASH);
      meta.setAnnotations(annotations);
      object.setMetadata(meta);
      annotations.put(
          BrokerLabels.TEMPLATE_HASH,
          BrokerNames.sha256Hex(serialization.asJson(object)).substring(0, 16));
      meta.setAnnotations(annotations);
      out.add(new Desired.Rendered(served, object));
    }
    return out;
  }
}
