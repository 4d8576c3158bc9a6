package io.jakri.agent.dra;

import static io.jakri.agent.dra.ResourceSlicePublisher.CONFIGURATION_LABEL;
import static io.jakri.agent.dra.ResourceSlicePublisher.MANAGED_BY;
import static io.jakri.agent.dra.ResourceSlicePublisher.MANAGER;
import static io.jakri.agent.dra.ResourceSlicePublisher.MAX_DEVICES_PER_SLICE;

import io.fabric8.kubernetes.api.model.NodeSelector;
import io.fabric8.kubernetes.api.model.NodeSelectorBuilder;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClassBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** The API objects of a pool: its ResourceSlices and its Configuration's DeviceClass (pure). */
final class Slices {

  private Slices() {}

  /** How many slices {@code devices} devices take. */
  static int count(int devices) {
    return (devices + MAX_DEVICES_PER_SLICE - 1) / MAX_DEVICES_PER_SLICE;
  }

  /** The devices of slice {@code index} of a pool of {@code devices}. */
  static List<PoolDevice> part(List<PoolDevice> devices, int index) {
    return devices.subList(
        index * MAX_DEVICES_PER_SLICE,
        Math.min(devices.size(), (index + 1) * MAX_DEVICES_PER_SLICE));
  }

  /**
   * Slice {@code index} of {@code count} of a pool at {@code generation}: on {@code node}, or
   * (shared) with a node selector per device.
   */
  static ResourceSlice slice(
      String node,
      String configuration,
      String pool,
      boolean shared,
      int index,
      long generation,
      int count,
      List<PoolDevice> part) {
    Map<String, String> labels = new LinkedHashMap<>();
    labels.put(MANAGED_BY, MANAGER);
    if (configuration.length() <= 63) {
      labels.put(CONFIGURATION_LABEL, configuration);
    }
    return new ResourceSliceBuilder()
        .withMetadata(
            new ObjectMetaBuilder()
                .withName(DraNames.slice(pool, index))
                .withLabels(labels)
                .build())
        .withNewSpec()
        .withDriver(DraNames.DRIVER)
        .withNodeName(shared ? null : node)
        .withPerDeviceNodeSelection(shared ? Boolean.TRUE : null)
        .withNewPool()
        .withName(pool)
        .withGeneration(generation)
        .withResourceSliceCount((long) count)
        .endPool()
        .withDevices(
            part.stream()
                .map(
                    e ->
                        new DeviceBuilder()
                            .withName(e.name())
                            .withAttributes(e.attributes())
                            .withNodeSelector(shared ? nodeSelector(e.nodes()) : null)
                            .build())
                .toList())
        .endSpec()
        .build();
  }

  /** A node selector of one term: the node named one of {@code nodes}. */
  static NodeSelector nodeSelector(List<String> nodes) {
    return new NodeSelectorBuilder()
        .addNewNodeSelectorTerm()
        .addNewMatchField()
        .withKey("metadata.name")
        .withOperator("In")
        .withValues(nodes)
        .endMatchField()
        .endNodeSelectorTerm()
        .build();
  }

  /** The index a slice's name ends with ({@link Integer#MAX_VALUE} when none). */
  static int indexOf(String sliceName) {
    int dash = sliceName.lastIndexOf('-');
    try {
      return Integer.parseInt(sliceName.substring(dash + 1));
    } catch (NumberFormatException e) {
      return Integer.MAX_VALUE;
    }
  }

  /** The DeviceClass {@link DraNames#deviceClass} of a Configuration. */
  static DeviceClass deviceClass(String configuration) {
    return new DeviceClassBuilder()
        .withMetadata(
            new ObjectMetaBuilder()
                .withName(DraNames.deviceClass(configuration))
                .withLabels(Map.of(MANAGED_BY, MANAGER))
                .build())
        .withNewSpec()
        .addNewSelector()
        .withNewCel()
        .withExpression(selector(configuration))
        .endCel()
        .endSelector()
        .endSpec()
        .build();
  }

  /** The CEL selector of a Configuration's DeviceClass. */
  static String selector(String configuration) {
    return "device.driver == \""
        + DraNames.DRIVER
        + "\" && device.attributes[\""
        + DraNames.DOMAIN
        + "\"].configuration == \""
        + configuration
        + "\"";
  }
}
