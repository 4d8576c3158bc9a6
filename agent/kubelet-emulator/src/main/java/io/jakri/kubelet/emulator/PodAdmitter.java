package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.ResourceState.HEALTHY;

import io.grpc.StatusRuntimeException;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.AllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.PreStartContainerRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Pod admission and allocation, like the kubelet's device manager: picks devices (init-container
 * devices reused, GetPreferredAllocation when the plugin asks for it, then any healthy free one),
 * one Allocate per container and resource, PreStartContainer before each container start where
 * required; keeps the admitted pods. Admissions are serialised; plugin RPCs run on the calling
 * thread without the state lock.
 */
final class PodAdmitter {
  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  private final EmulatorState state;
  private final CheckpointWriter checkpoint;
  private final ReentrantLock admissionLock = new ReentrantLock();

  PodAdmitter(EmulatorState state, CheckpointWriter checkpoint) {
    this.state = state;
    this.checkpoint = checkpoint;
  }

  /** Admitted pods in admission order. */
  List<PodAdmission> pods() {
    synchronized (state.lock) {
      return state.pods.values().stream().map(AdmittedPod::admission).toList();
    }
  }

  /** See {@link KubeletEmulator#admit(Pod)}. */
  PodAdmission admit(Pod pod) throws AdmissionException {
    Objects.requireNonNull(pod, "pod");
    String key = AdmittedPod.key(pod.namespace(), pod.name());
    admissionLock.lock();
    try {
      synchronized (state.lock) {
        state.requireRunningLocked();
        if (state.pods.containsKey(key)) {
          throw new IllegalStateException("pod " + key + " is already admitted");
        }
      }
      try {
        AdmittedPod admitted = allocatePod(pod);
        synchronized (state.lock) {
          state.requireRunningLocked();
          state.pods.put(key, admitted);
          checkpoint.saveLocked();
        }
        state.fire();
        log.info("Admitted pod {}: {}", key, describe(admitted.admission()));
        return admitted.admission();
      } catch (AdmissionException e) {
        log.warn("Pod {} rejected: {}: {}", key, e.reason(), e.getMessage());
        throw e;
      }
    } finally {
      admissionLock.unlock();
    }
  }

  private AdmittedPod allocatePod(Pod pod) throws AdmissionException {
    // Devices held by this pod so far (they count as in use for its later containers).
    Map<String, Set<String>> held = new HashMap<>();
    // The kubelet's devicesToReuse: init container devices, free for the next containers.
    Map<String, Set<String>> reusable = new HashMap<>();
    Map<String, ContainerAllocation> allocations = new LinkedHashMap<>();
    Map<String, Map<String, ContainerAllocateResponse>> responses = new LinkedHashMap<>();
    List<Container> all = pod.allContainers();
    for (int i = 0; i < all.size(); i++) {
      Container c = all.get(i);
      boolean init = i < pod.initContainers().size();
      Map<String, List<String>> ids = new LinkedHashMap<>();
      Map<String, ContainerAllocateResponse> answers = new LinkedHashMap<>();
      for (Map.Entry<String, Long> request : c.requests().entrySet()) {
        String resource = request.getKey();
        long count = request.getValue();
        if (!resource.contains("/") || count <= 0) {
          continue; // not a device plugin resource, or nothing to allocate
        }
        List<String> picked =
            pick(
                resource,
                (int) Math.min(count, Integer.MAX_VALUE),
                reusable.getOrDefault(resource, Set.of()),
                held.getOrDefault(resource, Set.of()));
        held.computeIfAbsent(resource, r -> new LinkedHashSet<>()).addAll(picked);
        answers.put(resource, allocate(pod, c, resource, picked));
        ids.put(resource, picked);
      }
      ids.forEach(
          (resource, list) -> {
            if (init) {
              reusable.computeIfAbsent(resource, r -> new LinkedHashSet<>()).addAll(list);
            } else {
              reusable.getOrDefault(resource, new HashSet<>()).removeAll(list);
            }
          });
      allocations.put(c.name(), ContainerAllocation.merge(ids, answers));
      responses.put(c.name(), answers);
    }
    for (Container c : all) {
      startContainer(c.name(), allocations.get(c.name()).deviceIds());
    }
    return new AdmittedPod(
        pod, new PodAdmission(pod.namespace(), pod.name(), allocations), responses);
  }

  /** The kubelet's devicesToAllocate without topology: reuse, preferred, then any available. */
  private List<String> pick(String resource, int required, Set<String> reusable, Set<String> held)
      throws AdmissionException {
    List<String> picked = new ArrayList<>();
    for (String id : reusable) {
      if (picked.size() == required) {
        break;
      }
      picked.add(id);
    }
    if (picked.size() == required) {
      return picked; // no plugin call when init-container devices suffice
    }
    PluginEndpoint ep;
    List<String> available;
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(resource);
      Set<String> inUse = inUseLocked(resource);
      inUse.addAll(held);
      inUse.addAll(picked);
      available =
          rs == null || rs.dropped
              ? List.of()
              : rs.devices.entrySet().stream()
                  .filter(e -> HEALTHY.equals(e.getValue()) && !inUse.contains(e.getKey()))
                  .map(Map.Entry::getKey)
                  .toList();
      if (rs == null || rs.endpoint.isEmpty() || available.size() < required - picked.size()) {
        throw AdmissionException.insufficient(resource, required, available.size() + picked.size());
      }
      ep = rs.endpoint.get();
    }
    if (ep.options().getGetPreferredAllocationAvailable()) {
      List<String> offered = new ArrayList<>(available);
      offered.addAll(picked);
      PreferredAllocationResponse answer;
      try {
        answer =
            ep.blocking.getPreferredAllocation(
                PreferredAllocationRequest.newBuilder()
                    .addContainerRequests(
                        ContainerPreferredAllocationRequest.newBuilder()
                            .addAllAvailableDeviceIDs(offered)
                            .addAllMustIncludeDeviceIDs(picked)
                            .setAllocationSize(required))
                    .build());
      } catch (StatusRuntimeException e) {
        throw AdmissionException.unexpected(
            "device plugin GetPreferredAllocation rpc failed with err: " + GoErrors.rpcError(e));
      }
      if (answer.getContainerResponsesCount() > 0) {
        Set<String> availableSet = new HashSet<>(available);
        for (String id : answer.getContainerResponses(0).getDeviceIDsList()) {
          if (picked.size() == required) {
            break;
          }
          // The kubelet intersects the answer with the available devices.
          if (availableSet.contains(id) && !picked.contains(id)) {
            picked.add(id);
          }
        }
      }
    }
    for (String id : available) {
      if (picked.size() == required) {
        break;
      }
      if (!picked.contains(id)) {
        picked.add(id);
      }
    }
    return picked;
  }

  private Set<String> inUseLocked(String resource) {
    Set<String> inUse = new HashSet<>();
    for (AdmittedPod p : state.pods.values()) {
      for (ContainerAllocation a : p.admission().containers().values()) {
        inUse.addAll(a.deviceIds(resource));
      }
    }
    return inUse;
  }

  private ContainerAllocateResponse allocate(
      Pod pod, Container container, String resource, List<String> ids) throws AdmissionException {
    PluginEndpoint ep;
    synchronized (state.lock) {
      ResourceState rs = state.resources.get(resource);
      if (rs == null || rs.endpoint.isEmpty()) {
        throw AdmissionException.unexpected("unknown Device Plugin " + resource);
      }
      if (!rs.live) {
        throw AdmissionException.unexpected("endpoint " + resource + " has been stopped");
      }
      ep = rs.endpoint.get();
    }
    log.debug(
        "Allocate {} {} for container {} of pod {}/{}",
        resource,
        ids,
        container.name(),
        pod.namespace(),
        pod.name());
    AllocateResponse answer;
    try {
      answer =
          ep.blocking.allocate(
              AllocateRequest.newBuilder()
                  .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids))
                  .build());
    } catch (StatusRuntimeException e) {
      throw AdmissionException.unexpected(GoErrors.rpcError(e));
    }
    if (answer.getContainerResponsesCount() == 0) {
      throw AdmissionException.unexpected(
          "no containers return in allocation response " + answer.toString().trim());
    }
    return answer.getContainerResponses(0);
  }

  /** Before a container starts: PreStartContainer per resource whose plugin requires it. */
  private void startContainer(String container, Map<String, List<String>> deviceIds)
      throws AdmissionException {
    for (Map.Entry<String, List<String>> e : deviceIds.entrySet()) {
      String resource = e.getKey();
      PluginEndpoint ep;
      boolean live;
      synchronized (state.lock) {
        ResourceState rs = state.resources.get(resource);
        if (rs == null || rs.endpoint.isEmpty()) {
          throw AdmissionException.preStartFailed(
              "endpoint not found in cache for a registered resource: " + resource);
        }
        ep = rs.endpoint.get();
        live = rs.live;
      }
      if (!ep.options().getPreStartRequired()) {
        continue;
      }
      if (!live) {
        throw AdmissionException.preStartFailed("endpoint " + resource + " has been stopped");
      }
      try {
        ep.blocking
            .withDeadlineAfter(KubeletEmulator.PRE_START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .preStartContainer(
                PreStartContainerRequest.newBuilder().addAllDevicesIds(e.getValue()).build());
        log.debug("PreStartContainer {} {} for container {}", resource, e.getValue(), container);
      } catch (StatusRuntimeException ex) {
        throw AdmissionException.preStartFailed(GoErrors.rpcError(ex));
      }
    }
  }

  /** See {@link KubeletEmulator#restartContainer(String, String, String)}. */
  void restartContainer(String namespace, String name, String container) throws AdmissionException {
    Map<String, List<String>> deviceIds;
    synchronized (state.lock) {
      AdmittedPod pod = state.pods.get(AdmittedPod.key(namespace, name));
      if (pod == null || !pod.admission().containers().containsKey(container)) {
        throw new IllegalArgumentException(
            "no container " + container + " in admitted pod " + AdmittedPod.key(namespace, name));
      }
      deviceIds = pod.admission().container(container).deviceIds();
    }
    startContainer(container, deviceIds);
    log.info("Restarted container {} of pod {}", container, AdmittedPod.key(namespace, name));
  }

  /** The pod was deleted: its devices are free again. No-op for an unknown pod. */
  void removePod(String namespace, String name) {
    AdmittedPod removed;
    synchronized (state.lock) {
      removed = state.pods.remove(AdmittedPod.key(namespace, name));
      if (removed != null) {
        checkpoint.saveLocked();
      }
    }
    state.fire();
    if (removed != null) {
      log.info("Removed pod {}: its devices are free again", AdmittedPod.key(namespace, name));
    }
  }

  private static String describe(PodAdmission admission) {
    StringBuilder b = new StringBuilder();
    admission
        .containers()
        .forEach(
            (container, a) -> {
              if (!a.deviceIds().isEmpty()) {
                if (b.length() > 0) {
                  b.append("; ");
                }
                b.append(container).append(' ').append(a.deviceIds());
              }
            });
    return b.length() == 0 ? "no devices" : b.toString();
  }
}
