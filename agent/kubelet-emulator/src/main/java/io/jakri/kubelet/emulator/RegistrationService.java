package io.jakri.kubelet.emulator;

import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;

/** {@code /v1beta1.Registration/Register} on {@code kubelet.sock}; answers asynchronously. */
final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
  private final Registrar registrar;

  RegistrationService(Registrar registrar) {
    this.registrar = registrar;
  }

  @Override
  public void register(RegisterRequest request, StreamObserver<Empty> response) {
    registrar.onRegister(request, response);
  }
}
