package io.jakri.agent.cluster;

import io.jakri.agent.instance.Instance;
import java.util.Map;

/**
 * One cached Instance: the agent's view (the resource with the guarded slots shown held), the
 * resource it came from, and the guards (see {@link HolderOnlyRelease}).
 */
record CachedInstance(
    Instance value, io.jakri.crd.Instance resource, Map<String, HolderOnlyRelease.Guard> guards) {
  CachedInstance(Instance value, io.jakri.crd.Instance resource) {
    this(value, resource, Map.of());
  }
}
