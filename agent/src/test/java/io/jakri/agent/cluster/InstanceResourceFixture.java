package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.crd.InstanceSpec;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Instance resources as the API server holds them, for the store parts' unit tests. */
final class InstanceResourceFixture {

  private InstanceResourceFixture() {}

  /**
   * A resource of Instance x-aaaaaa (capacity 2) of Configuration x at {@code version}; {@code
   * namespace} and {@code released} (the {@link KubernetesInstanceStore#RELEASED_ANNOTATION}) may
   * be null.
   */
  static io.jakri.crd.Instance resource(
      String namespace,
      String uid,
      long version,
      List<String> nodes,
      Map<String, String> usage,
      String released) {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("x");
    spec.setCapacity(2);
    spec.setNodes(nodes);
    spec.setDeviceUsage(new LinkedHashMap<>(usage));
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName("x-aaaaaa")
            .withNamespace(namespace)
            .withUid(uid)
            .withResourceVersion(Long.toString(version));
    if (released != null) {
      meta.addToAnnotations(KubernetesInstanceStore.RELEASED_ANNOTATION, released);
    }
    io.jakri.crd.Instance r = new io.jakri.crd.Instance();
    r.setMetadata(meta.build());
    r.setSpec(spec);
    return r;
  }

  /** The store's cached view of {@code r}. */
  static CachedInstance seen(io.jakri.crd.Instance r) {
    return new CachedInstance(InstanceResources.toInstance(r), r);
  }
}
