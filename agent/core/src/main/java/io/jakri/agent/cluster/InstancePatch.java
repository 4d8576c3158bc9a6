package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceSpec;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * The JSON patch (RFC 6902) a write of an Instance sends when only slot usages and nodes change:
 * its first operation sets {@code metadata.resourceVersion} to the version the change was computed
 * from, so the API server (and the fabric8 mock server) reject it with 409 when someone else wrote
 * first, exactly as they reject a stale PUT.
 */
final class InstancePatch {

  private InstancePatch() {}

  /**
   * The JSON patch turning the cached resource into {@code desired}, when the change is confined to
   * slot usages and nodes (the claims, releases and joins agents make all the time); empty when a
   * whole-object replacement is needed.
   */
  static Optional<List<Map<String, Object>>> patchOps(CachedInstance current, Instance desired) {
    Instance base = current.value();
    InstanceSpec spec = current.resource().getSpec();
    if (spec == null
        || spec.getDeviceUsage() == null
        || spec.getNodes() == null
        || base.capacity() != desired.capacity()
        || base.shared() != desired.shared()
        || !base.configurationName().equals(desired.configurationName())
        || !base.brokerProperties().equals(desired.brokerProperties())
        || !spec.getDeviceUsage().keySet().equals(desired.deviceUsage().keySet())) {
      return Optional.empty();
    }
    List<Map<String, Object>> ops = new ArrayList<>();
    ops.add(op("replace", "/metadata/resourceVersion", Long.toString(base.version())));
    if (!base.nodes().equals(desired.nodes())) {
      ops.add(op("add", "/spec/nodes", new ArrayList<>(desired.nodes())));
    }
    desired
        .deviceUsage()
        .forEach(
            (slot, usage) -> {
              if (!usage.equals(base.deviceUsage().get(slot))) {
                ops.add(op("add", "/spec/deviceUsage/" + JsonPointer.escape(slot), usage.print()));
              }
            });
    return Optional.of(ops);
  }

  /** One patch operation. */
  static Map<String, Object> op(String op, String path, Object value) {
    Map<String, Object> m = new LinkedHashMap<>(4);
    m.put("op", op);
    m.put("path", path);
    m.put("value", value);
    return m;
  }
}
