package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.ConnectException;
import java.util.concurrent.CompletionException;
import org.junit.jupiter.api.Test;

class WatchFailureTest {

  @Test
  void aRefusedConnectionNamesTheServerAndTheInnermostCause() {
    Throwable wrapped =
        new CompletionException(
            new RuntimeException(
                "An error has occurred.", new ConnectException("Connection refused")));
    assertThat(WatchFailure.describe("https://127.0.0.1:9/", wrapped))
        .isEqualTo("cannot reach the API server https://127.0.0.1:9/: Connection refused");
  }

  @Test
  void otherFailuresAreTheirOwnWordsOnOneLine() {
    assertThat(
            WatchFailure.describe(
                "https://k8s/", new IllegalStateException("Forbidden:\n  cannot list")))
        .isEqualTo("Forbidden: cannot list");
  }
}
