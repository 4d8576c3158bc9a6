package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import io.grpc.stub.StreamObserver;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import v0.Discovery.Empty;
import v0.Discovery.RegisterDiscoveryHandlerRequest;

class RegistrationServiceTest {

  @TempDir Path dir;

  final List<String> registered = new ArrayList<>();

  /** What the service answered one call. */
  static final class Answer implements StreamObserver<Empty> {
    final List<Empty> values = new ArrayList<>();
    Status error;
    boolean completed;

    @Override
    public void onNext(Empty value) {
      values.add(value);
    }

    @Override
    public void onError(Throwable t) {
      error = Status.fromThrowable(t);
    }

    @Override
    public void onCompleted() {
      completed = true;
    }
  }

  static RegisterDiscoveryHandlerRequest request(String name, String endpoint) {
    return RegisterDiscoveryHandlerRequest.newBuilder()
        .setName(name)
        .setEndpoint(endpoint)
        .setEndpointType(RegisterDiscoveryHandlerRequest.EndpointType.NETWORK)
        .setShared(true)
        .build();
  }

  RegistrationService service(int perSecond, boolean accept) {
    return new RegistrationService(
        dir,
        perSecond,
        () -> 0L, // time stands still: no token comes back
        (endpoint, source) -> {
          registered.add(endpoint + " " + source);
          return accept;
        });
  }

  Answer call(RegistrationService service, RegisterDiscoveryHandlerRequest request) {
    Answer answer = new Answer();
    service.registerDiscoveryHandler(request, answer);
    return answer;
  }

  @Test
  void aValidRegistrationIsRegisteredAndAnswered() {
    Answer answer = call(service(10, true), request("opc", "http://10.0.0.1:8080"));
    assertThat(answer.error).isNull();
    assertThat(answer.values).containsExactly(Empty.getDefaultInstance());
    assertThat(answer.completed).isTrue();
    assertThat(registered)
        .containsExactly(
            new ExternalEndpoint("opc", "http://10.0.0.1:8080", ExternalEndpoint.Type.NETWORK, true)
                + " registered through agent-registration.sock");
  }

  @Test
  void anInvalidRegistrationIsRefusedNamingTheRule() {
    Answer answer = call(service(10, true), request("opc", "ftp://10.0.0.1:8080"));
    assertThat(answer.error.getCode()).isEqualTo(Status.Code.INVALID_ARGUMENT);
    assertThat(answer.error.getDescription())
        .isEqualTo("endpoint \"ftp://10.0.0.1:8080\" is not http://host:port");
    assertThat(answer.completed).isFalse();
    assertThat(registered).isEmpty();
  }

  @Test
  void aRegistrationOverTheEndpointLimitIsRefused() {
    Answer answer = call(service(10, false), request("opc", "http://10.0.0.1:8080"));
    assertThat(answer.error.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(answer.error.getDescription())
        .isEqualTo("registration of opc@http://10.0.0.1:8080 refused: 256 endpoints");
    assertThat(answer.values).isEmpty();
  }

  @Test
  void registrationsBeyondTheRateAreRefusedBeforeBeingChecked() {
    RegistrationService service = service(1, true);
    assertThat(call(service, request("a", "http://10.0.0.1:1")).completed).isTrue();
    assertThat(call(service, request("b", "http://10.0.0.1:2")).completed).isTrue();
    Answer third = call(service, request("not a name", "x"));
    assertThat(third.error.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(third.error.getDescription()).isEqualTo("too many registrations; retry later");
    assertThat(registered).hasSize(2);
  }
}
