package io.jakri.agent.cluster;

import io.fabric8.kubernetes.client.KubernetesClient;

/**
 * The API server a {@link ClusterHarness} runs its agents against: the real one ({@link
 * RealApiPeer}) or fabric8's mock in CRUD mode ({@link MockApiPeer}, only for tests that count or
 * inject requests, which a real server cannot do).
 */
interface ApiPeer {

  /** A client with every right, for the test's own setup and checks. */
  KubernetesClient admin();

  /**
   * A new client for the agent of {@code node}, with the request retries the agent gives its own.
   */
  KubernetesClient agentClient(String node);

  /** The namespace the harness's Configurations and Instances live in. */
  String namespace();

  /** Makes sure namespace {@code name} exists (a real server refuses objects in a missing one). */
  default void ensureNamespace(String name) {}

  /** Removes what the harness left in the API server (called after its agents stopped). */
  default void close() {}
}
