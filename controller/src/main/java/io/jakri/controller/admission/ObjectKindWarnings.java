package io.jakri.controller.admission;

import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.controller.objects.KindDiscovery;
import io.jakri.controller.objects.ObjectKinds;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The webhook's warnings about {@code spec.instanceObjects} of kinds this controller may not create
 * ({@code --instance-object-resources}): allowed in the Configuration (the operator may allow the
 * kind later), but said at {@code kubectl apply} rather than only in the status afterwards. The
 * kinds are the controller's ({@link KindDiscovery}): resolved at the first Configuration that has
 * instance objects unless the controller did so already, and again after a failed attempt.
 * Thread-safe.
 */
final class ObjectKindWarnings {

  private final KindDiscovery kinds;

  ObjectKindWarnings(KindDiscovery kinds) {
    this.kinds = kinds;
  }

  /** One warning per template of a kind that would be refused; none when discovery fails. */
  List<String> of(String where, Object document) {
    List<?> templates =
        Optional.ofNullable(document instanceof Map<?, ?> d ? d.get("spec") : null)
            .map(s -> s instanceof Map<?, ?> m ? m.get("instanceObjects") : null)
            .map(o -> o instanceof List<?> l ? l : null)
            .orElse(List.of());
    List<String> warnings = new ArrayList<>();
    for (int i = 0; i < templates.size(); i++) {
      if (!(templates.get(i) instanceof Map<?, ?> t)
          || !(t.get("apiVersion") instanceof String apiVersion)
          || !(t.get("kind") instanceof String kind)) {
        continue; // validate reports it
      }
      Optional<ObjectKinds> known = kinds();
      if (known.isEmpty()) {
        return List.of();
      }
      if (known.get().lookup(apiVersion, kind) instanceof ObjectKinds.Lookup.Refused r) {
        warnings.add(
            where
                + ": spec.instanceObjects["
                + i
                + "]: "
                + r.message()
                + "; it will not be created, and the Configuration's status will say so");
      }
    }
    return warnings;
  }

  private Optional<ObjectKinds> kinds() {
    try {
      return Optional.of(kinds.resolve());
    } catch (KubernetesClientException e) {
      return Optional.empty();
    }
  }
}
