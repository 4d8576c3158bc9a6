package io.jakri.logging;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class ApiFailureTest {

  @Test
  void aRefusedConnectionNamesTheServerAndTheInnermostCause() {
    Throwable wrapped =
        new CompletionException(
            new RuntimeException(
                "An error has occurred.", new ConnectException("Connection refused")));
    assertThat(ApiFailure.describe("https://127.0.0.1:9/", wrapped))
        .isEqualTo("cannot reach the API server https://127.0.0.1:9/: Connection refused");
  }

  @Test
  void otherFailuresAreTheirOwnWordsOnOneLine() {
    assertThat(
            ApiFailure.describe(
                "https://k8s/", new IllegalStateException("Forbidden:\n  cannot list")))
        .isEqualTo("Forbidden: cannot list");
  }

  @Test
  void theJdkClientsRefusalWithoutWordsIsSaidAsARefusedConnection() {
    // What java.net.http.HttpClient throws for a port nobody listens on (no message anywhere).
    ConnectException refused = new ConnectException();
    refused.initCause(new java.nio.channels.ClosedChannelException());
    Throwable wrapped =
        new RuntimeException("An error has occurred.", new CompletionException(refused));
    assertThat(ApiFailure.describe("https://127.0.0.1:9/", wrapped))
        .isEqualTo("cannot reach the API server https://127.0.0.1:9/: Connection refused");
  }
}
