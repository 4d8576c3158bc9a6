package io.jakri.kubelet.emulator;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.time.Duration;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;

/**
 * {@code /v1beta1.Registration/Register} on {@code kubelet.sock}; answers asynchronously. With a
 * delay (a slow kubelet, {@link KubeletEmulator.Builder#registerDelay}) each Register is handled
 * that long after it arrived, every one on its own timer, so calls in flight at once are delayed
 * side by side as by a kubelet busy elsewhere, not queued behind each other.
 */
final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {
  private final Registrar registrar;
  private final Duration delay;
  private final ScheduledExecutorService timer;

  RegistrationService(Registrar registrar, Duration delay, ScheduledExecutorService timer) {
    this.registrar = registrar;
    this.delay = delay;
    this.timer = timer;
  }

  @Override
  public void register(RegisterRequest request, StreamObserver<Empty> response) {
    if (delay.isZero()) {
      registrar.onRegister(request, response);
      return;
    }
    try {
      timer.schedule(
          () -> registrar.onRegister(request, response), delay.toNanos(), TimeUnit.NANOSECONDS);
    } catch (RejectedExecutionException e) {
      response.onError(
          Status.UNAVAILABLE.withDescription("kubelet is shutting down").asRuntimeException());
    }
  }
}
