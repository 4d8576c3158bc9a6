package io.jakri.kubelet.emulator;

import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.podresources.v1.ListPodResourcesRequest;
import io.jakri.kubelet.podresources.v1.ListPodResourcesResponse;
import io.jakri.kubelet.podresources.v1.PodResourcesListerGrpc;

/** {@code /v1.PodResourcesLister/List} on the pod-resources socket. */
final class PodResourcesService extends PodResourcesListerGrpc.PodResourcesListerImplBase {
  private final KubeletEmulator emulator;

  PodResourcesService(KubeletEmulator emulator) {
    this.emulator = emulator;
  }

  @Override
  public void list(
      ListPodResourcesRequest request, StreamObserver<ListPodResourcesResponse> response) {
    response.onNext(emulator.listPodResources());
    response.onCompleted();
  }
}
