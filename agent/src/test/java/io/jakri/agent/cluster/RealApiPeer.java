package io.jakri.agent.cluster;

import io.fabric8.kubernetes.client.Config;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.agent.Agent;
import io.jakri.crd.Crds;
import io.jakri.testing.kube.RealApiServer;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * The real API server (RBAC on) with the project's CRDs and the agent's RBAC exactly as shipped in
 * {@code agent/rbac/agent-rbac.yaml}: every agent authenticates as ServiceAccount {@code
 * default/jakri-agent} with a token of its own, so any verb the code needs and the manifest lacks
 * fails as it would in a cluster. Each harness gets a namespace of its own.
 */
public final class RealApiPeer implements ApiPeer {

  static final Path AGENT_RBAC = Path.of("rbac", "agent-rbac.yaml").toAbsolutePath();

  private final RealApiServer api;
  private final String namespace;
  private final java.util.Set<String> touched = new java.util.concurrent.ConcurrentSkipListSet<>();

  RealApiPeer(RealApiServer api, String prefix) {
    this.api = api;
    installCrdsAndRbac(api);
    this.namespace = api.namespace(prefix);
    touched.add(namespace);
  }

  /** The CRDs as shipped and the agent's RBAC manifest, applied as an operator would. */
  public static void installCrdsAndRbac(RealApiServer api) {
    api.installCrds(Crds.load());
    try {
      api.apply(Files.readString(AGENT_RBAC));
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  @Override
  public KubernetesClient admin() {
    return api.admin();
  }

  @Override
  public KubernetesClient agentClient(String node) {
    return agentClient(api);
  }

  /**
   * A client on the agent's ServiceAccount ({@code default/jakri-agent}, bound by the shipped
   * manifest) with the request retries the agent gives its own client.
   */
  public static KubernetesClient agentClient(RealApiServer api) {
    Config config = api.serviceAccountConfig("default", "jakri-agent");
    config.setRequestRetryBackoffLimit(Agent.API_RETRIES);
    config.setRequestRetryBackoffInterval(Agent.API_RETRY_INTERVAL_MS);
    return api.client(config);
  }

  @Override
  public String namespace() {
    return namespace;
  }

  RealApiServer server() {
    return api;
  }

  @Override
  public void ensureNamespace(String name) {
    if (touched.add(name) && api.admin().namespaces().withName(name).get() == null) {
      api.admin()
          .namespaces()
          .resource(
              new io.fabric8.kubernetes.api.model.NamespaceBuilder()
                  .withNewMetadata()
                  .withName(name)
                  .endMetadata()
                  .build())
          .create();
      api.serviceAccount(name, "default");
    }
  }

  /**
   * Deletes the Configurations and Instances of every namespace this harness used, so agents of
   * later test classes (which may watch every namespace) do not meet them. No garbage collector
   * runs on this server, so Instances are deleted explicitly.
   */
  @Override
  public void close() {
    for (String ns : touched) {
      api.admin().resources(io.jakri.crd.Configuration.class).inNamespace(ns).delete();
      api.admin().resources(io.jakri.crd.Instance.class).inNamespace(ns).delete();
    }
  }
}
