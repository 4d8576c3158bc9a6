package io.jakri.agent.external;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.function.LongSupplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import v0.Discovery.Empty;
import v0.Discovery.RegisterDiscoveryHandlerRequest;
import v0.RegistrationGrpc;

/**
 * {@code v0.Registration}: checks each request ({@link ExternalEndpoint#check}), rate-limited
 * ({@link ExternalHandlers.Settings#registrationsPerSecond}), and hands it to a {@link Registrar}.
 */
final class RegistrationService extends RegistrationGrpc.RegistrationImplBase {

  // ExternalHandlers' logger: these lines were always its.
  private static final Logger LOG = LoggerFactory.getLogger(ExternalHandlers.class);

  /** Registers an accepted endpoint. */
  @FunctionalInterface
  interface Registrar {
    /** False when refused for the endpoint limit. */
    boolean register(ExternalEndpoint endpoint, String source);
  }

  private final Path directory;
  private final int perSecond;
  private final RateLimit rate;
  private final Registrar registrar;

  RegistrationService(Path directory, int perSecond, LongSupplier nanoTime, Registrar registrar) {
    this.directory = directory;
    this.perSecond = perSecond;
    this.rate = new RateLimit(perSecond, nanoTime);
    this.registrar = registrar;
  }

  @Override
  public void registerDiscoveryHandler(
      RegisterDiscoveryHandlerRequest request, StreamObserver<Empty> response) {
    if (!rate.tryAcquire()) {
      long refused = rate.refusedNow();
      if (refused == 1 || refused % 1000 == 0) {
        LOG.warn(
            "registration of \"{}\" refused: more than {} registrations per second ({} refused"
                + " so far)",
            ExternalEndpoint.shorten(request.getName()),
            perSecond,
            refused);
      }
      response.onError(
          Status.RESOURCE_EXHAUSTED
              .withDescription("too many registrations; retry later")
              .asRuntimeException());
      return;
    }
    ExternalEndpoint.Checked checked = ExternalEndpoint.check(request, directory, true);
    if (checked instanceof ExternalEndpoint.Refused r) {
      LOG.warn("discovery handler registration refused: {}", r.reason());
      response.onError(Status.INVALID_ARGUMENT.withDescription(r.reason()).asRuntimeException());
      return;
    }
    ExternalEndpoint endpoint = ((ExternalEndpoint.Accepted) checked).endpoint();
    if (!registrar.register(endpoint, "registered through " + ExternalHandlers.SOCKET_NAME)) {
      String reason =
          "registration of "
              + endpoint.key()
              + " refused: "
              + ExternalHandlers.MAX_ENDPOINTS
              + " endpoints";
      LOG.warn("discovery handler {}", reason);
      response.onError(Status.RESOURCE_EXHAUSTED.withDescription(reason).asRuntimeException());
      return;
    }
    response.onNext(Empty.getDefaultInstance());
    response.onCompleted();
  }
}
