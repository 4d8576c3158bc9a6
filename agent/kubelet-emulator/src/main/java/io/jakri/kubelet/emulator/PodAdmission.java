package io.jakri.kubelet.emulator;

import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What an admitted pod received: one {@link ContainerAllocation} per container (init containers
 * first, then app containers; containers without extended resources get an empty allocation).
 */
public record PodAdmission(
    String namespace, String name, Map<String, ContainerAllocation> containers) {

  public PodAdmission {
    containers = Collections.unmodifiableMap(new LinkedHashMap<>(containers));
  }

  /** The allocation of one container; an empty allocation if the container is unknown. */
  public ContainerAllocation container(String containerName) {
    return containers.getOrDefault(containerName, ContainerAllocation.EMPTY);
  }
}
