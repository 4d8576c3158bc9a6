package io.jakri.kubelet.emulator;

import static org.assertj.core.api.Assertions.assertThat;

import io.grpc.Status;
import org.junit.jupiter.api.Test;

class GoErrorsTest {

  @Test
  void formatsStatusErrorsLikeGrpcGo() {
    assertThat(GoErrors.rpcError(Status.UNKNOWN.withDescription("boom").asRuntimeException()))
        .isEqualTo("rpc error: code = Unknown desc = boom");
    assertThat(GoErrors.codeName(Status.Code.DEADLINE_EXCEEDED)).isEqualTo("DeadlineExceeded");
    assertThat(GoErrors.codeName(Status.Code.CANCELLED)).isEqualTo("Canceled");
  }

  @Test
  void quotesLikeGoPercentQ() {
    assertThat(GoErrors.quote("a\"b")).isEqualTo("\"a\\\"b\"");
  }
}
