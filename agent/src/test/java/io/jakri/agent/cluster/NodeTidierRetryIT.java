package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.fabric8.kubernetes.api.model.Node;
import io.fabric8.kubernetes.api.model.NodeBuilder;
import io.fabric8.kubernetes.api.model.Quantity;
import io.fabric8.kubernetes.api.model.Status;
import io.fabric8.kubernetes.api.model.StatusBuilder;
import io.fabric8.kubernetes.client.ConfigBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientBuilder;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.fabric8.mockwebserver.http.RecordedRequest;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * {@link NodeTidier} against scripted answers a CRUD mock cannot give: a real API server's 422 for
 * a JSON-patch remove of a key that vanished, conflicts, and outages.
 */
@EnableKubernetesMockClient(https = false)
class NodeTidierRetryIT {

  private static final String NODE = "worker-1";
  private static final String NODE_PATH = "/api/v1/nodes/" + NODE;

  KubernetesClient client;
  KubernetesMockServer server;

  @Test
  void retriesWithAFreshReadWhenAKeyVanishedBeforeThePatch() throws Exception {
    AtomicInteger reads = new AtomicInteger();
    server
        .expect()
        .get()
        .withPath(NODE_PATH)
        .andReply(
            200,
            request ->
                reads.getAndIncrement() == 0 ? node("akri.sh/a", "akri.sh/b") : node("akri.sh/b"))
        .always();
    server
        .expect()
        .patch()
        .withPath(NODE_PATH + "/status")
        .andReturn(422, status(422, "the server rejected our request: missing path"))
        .once();
    server.expect().patch().withPath(NODE_PATH + "/status").andReturn(200, node()).once();

    var removed = new NodeTidier(client, NODE).removeResources(List.of("akri.sh/a", "akri.sh/b"));

    assertThat(removed).containsExactly("akri.sh/b");
    List<String> patches = patchBodies();
    assertThat(patches).hasSize(2);
    assertThat(patches.get(0)).contains("/status/capacity/akri.sh~1a");
    assertThat(patches.get(1))
        .doesNotContain("akri.sh~1a")
        .contains("/status/capacity/akri.sh~1b", "/status/allocatable/akri.sh~1b");
  }

  @Test
  void givesUpAfterABoundedNumberOfConflicts() throws Exception {
    server.expect().get().withPath(NODE_PATH).andReturn(200, node("akri.sh/a")).always();
    server
        .expect()
        .patch()
        .withPath(NODE_PATH + "/status")
        .andReturn(409, status(409, "conflict"))
        .always();

    assertThatThrownBy(() -> new NodeTidier(client, NODE).removeResources(List.of("akri.sh/a")))
        .isInstanceOf(NodeTidier.TidyException.class)
        .hasMessageContaining("Node(" + NODE + ")")
        .hasMessageContaining("after " + NodeTidier.MAX_ATTEMPTS + " attempts");
    assertThat(patchBodies()).hasSize(NodeTidier.MAX_ATTEMPTS);
  }

  @Test
  void anUnavailableApiIsAnErrorTheCallerCanRetry() {
    server.expect().get().withPath(NODE_PATH).andReturn(503, status(503, "etcd is down")).always();

    try (KubernetesClient noRetries = withoutRetries()) {
      assertThatThrownBy(() -> new NodeTidier(noRetries, NODE).sweep(name -> false))
          .isInstanceOf(NodeTidier.TidyException.class)
          .hasMessageContaining("Node(" + NODE + ")")
          .hasMessageContaining("cannot read the Node")
          .hasMessageContaining("HTTP 503");
    }
  }

  @Test
  void aForbiddenPatchIsNotRetried() throws Exception {
    server.expect().get().withPath(NODE_PATH).andReturn(200, node("akri.sh/a")).always();
    server
        .expect()
        .patch()
        .withPath(NODE_PATH + "/status")
        .andReturn(403, status(403, "nodes/status is forbidden"))
        .always();

    assertThatThrownBy(() -> new NodeTidier(client, NODE).removeResources(List.of("akri.sh/a")))
        .isInstanceOf(NodeTidier.TidyException.class)
        .hasMessageContaining("HTTP 403");
    assertThat(patchBodies()).hasSize(1);
  }

  /** fabric8 itself retries 5xx answers with back-off; the test needs the first answer. */
  private KubernetesClient withoutRetries() {
    return new KubernetesClientBuilder()
        .withConfig(
            new ConfigBuilder(client.getConfiguration()).withRequestRetryBackoffLimit(0).build())
        .build();
  }

  private static Node node(String... akriKeys) {
    Map<String, Quantity> quantities = new java.util.LinkedHashMap<>();
    quantities.put("cpu", new Quantity("4"));
    for (String key : akriKeys) {
      quantities.put(key, new Quantity("0"));
    }
    return new NodeBuilder()
        .withNewMetadata()
        .withName(NODE)
        .withResourceVersion("7")
        .endMetadata()
        .withNewStatus()
        .withCapacity(quantities)
        .withAllocatable(quantities)
        .endStatus()
        .build();
  }

  private static Status status(int code, String message) {
    return new StatusBuilder().withCode(code).withMessage(message).withStatus("Failure").build();
  }

  private List<String> patchBodies() throws InterruptedException {
    List<String> bodies = new ArrayList<>();
    int count = server.getRequestCount();
    for (int i = 0; i < count; i++) {
      RecordedRequest request = server.takeRequest(1, TimeUnit.SECONDS);
      if (request != null && request.getMethod().equals("PATCH")) {
        bodies.add(request.getBody().readUtf8());
      }
    }
    return bodies;
  }
}
