package io.jakri.kubelet.emulator;

import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.util.Map;

/**
 * An admitted pod as the device manager keeps it: the pod, what it was told, and the raw Allocate
 * answers per container and resource (cached for container restarts and the checkpoint).
 */
record AdmittedPod(
    Pod pod,
    PodAdmission admission,
    Map<String, Map<String, ContainerAllocateResponse>> responses) {

  String key() {
    return key(pod.namespace(), pod.name());
  }

  /** The key of a pod: {@code namespace/name}. */
  static String key(String namespace, String name) {
    return namespace + "/" + name;
  }
}
