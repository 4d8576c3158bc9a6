package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceSpec;
import io.jakri.crd.SlotUsage;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Conversions between the agent's {@link Instance} and the {@code instances.akri.sh} resource (in
 * Akri's wire format: {@code deviceUsage} strings, the CDI name, numeric resourceVersions).
 */
final class InstanceResources {

  // The store's logger: these lines read as the store's, as they always did.
  private static final Logger LOG = LoggerFactory.getLogger(KubernetesInstanceStore.class);

  private InstanceResources() {}

  /** The resource's spec for {@code instance}. */
  static InstanceSpec spec(Instance instance) {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName(instance.configurationName());
    spec.setCdiName(
        io.jakri.crd.Configuration.GROUP
            + "/"
            + instance.configurationName()
            + "="
            + instance.hash());
    spec.setCapacity(instance.capacity());
    spec.setShared(instance.shared());
    spec.setNodes(new ArrayList<>(instance.nodes()));
    spec.setBrokerProperties(new LinkedHashMap<>(instance.brokerProperties()));
    Map<String, String> usage = new LinkedHashMap<>();
    instance.deviceUsage().forEach((slot, u) -> usage.put(slot, u.print()));
    spec.setDeviceUsage(usage);
    return spec;
  }

  /** The Instance a resource holds; a malformed {@code deviceUsage} entry reads as free. */
  static Instance toInstance(io.jakri.crd.Instance resource) {
    String name = resource.getMetadata().getName();
    InstanceSpec spec = resource.getSpec() == null ? new InstanceSpec() : resource.getSpec();
    Map<String, SlotUsage> usage = new LinkedHashMap<>();
    if (spec.getDeviceUsage() != null) {
      spec.getDeviceUsage()
          .forEach(
              (slot, text) -> {
                try {
                  usage.put(slot, SlotUsage.parse(text));
                } catch (IllegalArgumentException e) {
                  LOG.warn("instance {}: ignoring malformed deviceUsage {}: {}", name, slot, text);
                }
              });
    }
    int capacity = spec.getCapacity() == null ? 1 : Math.max(1, spec.getCapacity());
    return new Instance(
        name,
        spec.getConfigurationName() == null ? "" : spec.getConfigurationName(),
        capacity,
        Boolean.TRUE.equals(spec.getShared()),
        spec.getNodes() == null ? new TreeSet<>() : new TreeSet<>(spec.getNodes()),
        usage,
        spec.getBrokerProperties() == null ? Map.of() : spec.getBrokerProperties(),
        version(resource));
  }

  /** The resource's resourceVersion as a number (0 when it has none). */
  static long version(HasMetadata resource) {
    String rv = resource.getMetadata().getResourceVersion();
    try {
      return rv == null ? 0 : Long.parseLong(rv);
    } catch (NumberFormatException e) {
      // resourceVersions are opaque; every server we know uses etcd's numeric revisions.
      throw new IllegalStateException("non-numeric resourceVersion " + rv, e);
    }
  }
}
