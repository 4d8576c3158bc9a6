package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.Optional;

/** Reads ResourceClaims ({@code resource.k8s.io/v1}) from the API server. */
@FunctionalInterface
public interface ClaimReader {

  /** The claim, or empty when there is none of that name; throws when the API cannot be read. */
  Optional<ResourceClaim> get(String namespace, String name) throws KubernetesClientException;

  static ClaimReader of(KubernetesClient client) {
    return (namespace, name) ->
        Optional.ofNullable(
            client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get());
  }
}
