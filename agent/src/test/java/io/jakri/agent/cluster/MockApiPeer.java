package io.jakri.agent.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.jakri.agent.Agent;

/**
 * fabric8's mock API server in CRUD mode: no RBAC, no admission, no subresource semantics. Only for
 * tests that count the requests the agents send or inject faults a real server cannot give.
 */
record MockApiPeer(KubernetesMockServer server, KubernetesClient admin) implements ApiPeer {

  @Override
  public KubernetesClient agentClient(String node) {
    return server.createClient(
        b ->
            b.editOrNewConfig()
                .withRequestRetryBackoffLimit(Agent.API_RETRIES)
                .withRequestRetryBackoffInterval(Agent.API_RETRY_INTERVAL_MS)
                .endConfig());
  }

  @Override
  public String namespace() {
    return ClusterHarness.NS;
  }
}
