package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * What the agent's lines about a refused API call carry: the HTTP code and the server's own
 * message, bounded, not fabric8's message with the URL and the whole {@code Status} dump (which
 * made every {@code cannot record it in the store (...)} ERROR hundreds of characters long).
 */
class ApiErrorTextTest {

  @Test
  void aRefusedCallIsItsHttpCodeAndTheServersMessage() {
    List<io.fabric8.kubernetes.api.model.StatusCause> causes = new ArrayList<>();
    for (int i = 0; i < 20; i++) {
      causes.add(
          new io.fabric8.kubernetes.api.model.StatusCauseBuilder()
              .withField("spec.deviceUsage.cams-8120fe-" + i)
              .withMessage("Invalid value: \"x\": must be a node name")
              .withReason("FieldValueInvalid")
              .build());
    }
    Status status =
        new StatusBuilder()
            .withCode(422)
            .withReason("Invalid")
            .withMessage("Instance.akri.sh \"cams-8120fe\" is invalid: spec.deviceUsage: Invalid")
            .withNewDetails()
            .withName("cams-8120fe")
            .withKind("Instance")
            .withCauses(causes)
            .endDetails()
            .build();
    // As fabric8 words it: the URL, then the whole Status object.
    KubernetesClientException e =
        new KubernetesClientException(
            "Failure executing: PUT at:"
                + " https://10.0.0.1:443/apis/akri.sh/v0/namespaces/jakri/instances/cams-8120fe."
                + " Message: "
                + status.getMessage()
                + ". Received status: "
                + status
                + ".",
            422,
            status);
    assertThat(e.getMessage()).hasSizeGreaterThan(2_000);

    assertThat(KubernetesInstanceStore.describe(e))
        .isEqualTo(
            "HTTP 422: Instance.akri.sh \"cams-8120fe\" is invalid: spec.deviceUsage: Invalid");
  }

  @Test
  void aLongServerMessageIsBoundedAndACallWithoutAnAnswerKeepsItsOwnWords() {
    Status status = new StatusBuilder().withCode(500).withMessage("y".repeat(5_000)).build();
    String text =
        KubernetesInstanceStore.describe(new KubernetesClientException("dump", 500, status));
    assertThat(text).startsWith("HTTP 500: yyy").hasSizeLessThanOrEqualTo(300);

    assertThat(
            KubernetesInstanceStore.describe(
                new KubernetesClientException("Connection refused", new java.io.IOException())))
        .isEqualTo("Connection refused");
  }
}
