package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import java.util.List;
import java.util.Map;

/**
 * One published device of a pool: its DRA name, its Instance and slot, its attributes and (shared
 * pool only) the nodes of its node selector.
 */
record PoolDevice(
    String name,
    String instance,
    String slot,
    Map<String, DeviceAttribute> attributes,
    List<String> nodes) {}
