package io.jakri.agent.cluster;

import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import java.nio.file.Path;
import java.time.Duration;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Cluster mode when the API server answers with errors of the test's choosing: fabric8's mock in
 * CRUD mode, because a real API server cannot be made to refuse exactly the next six creates. The
 * rest of the cluster-mode tests run on the real server ({@link ClusterAgentIT}).
 */
@EnableKubernetesMockClient(crud = true)
class ClusterAgentFaultsIT {

  KubernetesMockServer server;
  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;

  @BeforeEach
  void setUp() {
    cluster = new ClusterHarness(server, client, tmp);
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void instancesTheApiServerRefusedAreWrittenOnceItAcceptsWritesAgain() throws Exception {
    // Six refused creates: the client's own retries (3 attempts per call) and then the agent's
    // backoff must carry the Instance through, with no new snapshot from the handler.
    server
        .expect()
        .post()
        .withPath("/apis/akri.sh/v0/namespaces/default/instances")
        .andReturn(503, "{\"kind\":\"Status\",\"code\":503}")
        .times(6);
    cluster.start("n1", Duration.ofSeconds(30));
    cluster.apply(
        ClusterHarness.configuration(
            "late",
            "static",
            1,
            "deviceMapping:\n  - hosts: [n1]\n    devices:\n"
                + "      - resourceName: example.com/late\n        instanceID: \"1\"\n"));

    await().atMost(Duration.ofSeconds(30)).until(() -> cluster.instances().size() == 1);
    String name = cluster.instances().get(0).getMetadata().getName();
    cluster.awaitAllocatable("n1", "akri.sh/" + name, 1);
  }
}
