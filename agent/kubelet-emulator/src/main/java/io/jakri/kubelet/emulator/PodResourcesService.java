package io.jakri.kubelet.emulator;

import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.podresources.v1.ContainerDevices;
import io.jakri.kubelet.podresources.v1.ContainerResources;
import io.jakri.kubelet.podresources.v1.ListPodResourcesRequest;
import io.jakri.kubelet.podresources.v1.ListPodResourcesResponse;
import io.jakri.kubelet.podresources.v1.PodResources;
import io.jakri.kubelet.podresources.v1.PodResourcesListerGrpc;

/**
 * {@code /v1.PodResourcesLister/List} on the pod-resources socket: every admitted pod, its app
 * containers and their devices.
 */
final class PodResourcesService extends PodResourcesListerGrpc.PodResourcesListerImplBase {
  private final EmulatorState state;

  PodResourcesService(EmulatorState state) {
    this.state = state;
  }

  @Override
  public void list(
      ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
    response.onNext(listPodResources());
    response.onCompleted();
  }

  ListPodResourcesResponse listPodResources() {
    ListPodResourcesResponse.Builder out = ListPodResourcesResponse.newBuilder();
    synchronized (state.lock) {
      for (AdmittedPod p : state.pods.values()) {
        PodResources.Builder pr =
            PodResources.newBuilder().setName(p.pod().name()).setNamespace(p.pod().namespace());
        // Like the kubelet's v1 List: app containers only.
        for (Container c : p.pod().containers()) {
          ContainerResources.Builder cr = ContainerResources.newBuilder().setName(c.name());
          p.admission()
              .container(c.name())
              .deviceIds()
              .forEach(
                  (resource, ids) ->
                      cr.addDevices(
                          ContainerDevices.newBuilder()
                              .setResourceName(resource)
                              .addAllDeviceIds(ids)));
          pr.addContainers(cr);
        }
        out.addPodResources(pr);
      }
    }
    return out.build();
  }
}
