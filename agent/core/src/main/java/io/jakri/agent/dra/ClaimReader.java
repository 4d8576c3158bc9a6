package io.jakri.agent.dra;

import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import io.jakri.handler.Names;
import io.jakri.logging.LogText;
import java.util.Optional;

/** Reads ResourceClaims ({@code resource.k8s.io/v1}) from the API server. */
@FunctionalInterface
public interface ClaimReader {

  /** The claim, or empty when there is none of that name; throws when the API cannot be read. */
  Optional<ResourceClaim> get(String namespace, String name) throws KubernetesClientException;

  /**
   * Why {@code namespace} and {@code name} cannot name a ResourceClaim, or empty when they can: the
   * namespace must be a DNS-1123 label and the name a DNS-1123 subdomain, as the API server
   * requires of every such object. Both become segments of the request's URL path; names of those
   * characters ({@code a-z 0-9 - .}, never {@code .} or {@code ..} alone) need no escaping there,
   * so anything else ({@code ../kube-system}, {@code x/../../y}, percent signs) is refused before
   * any request is made.
   */
  static Optional<String> problem(String namespace, String name) {
    if (!DraNames.isDnsLabel(namespace)) {
      return Optional.of(
          "namespace "
              + LogText.quote(namespace)
              + " is not a Kubernetes namespace name (a DNS-1123 label: lowercase letters, digits"
              + " and '-', at most 63 characters)");
    }
    if (!Names.isDnsSubdomain(name)) {
      return Optional.of(
          "name "
              + LogText.quote(name)
              + " is not a Kubernetes object name (a DNS-1123 subdomain: lowercase letters, digits,"
              + " '-' and '.', at most 253 characters)");
    }
    return Optional.empty();
  }

  /** Reads through {@code client}; refuses names {@link #problem} refuses, without a request. */
  static ClaimReader of(KubernetesClient client) {
    return (namespace, name) -> {
      Optional<String> problem = problem(namespace, name);
      if (problem.isPresent()) {
        throw new IllegalArgumentException("ResourceClaim not read: " + problem.get());
      }
      return Optional.ofNullable(
          client.resources(ResourceClaim.class).inNamespace(namespace).withName(name).get());
    };
  }
}
