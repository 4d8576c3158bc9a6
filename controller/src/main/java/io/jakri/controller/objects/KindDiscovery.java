package io.jakri.controller.objects;

import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.KubernetesClientException;
import java.util.List;
import java.util.Optional;

/**
 * The kinds of {@code --instance-object-resources}, resolved once per controller process with the
 * API server's discovery and shared by every namespace's controller and the admission webhook. A
 * failed discovery is tried again at the next {@link #resolve}. Thread-safe.
 */
public final class KindDiscovery {

  private final KubernetesClient client;
  private final List<AllowedResource> allowed;
  private volatile ObjectKinds kinds;

  public KindDiscovery(KubernetesClient client, List<AllowedResource> allowed) {
    this.client = client;
    this.allowed = List.copyOf(allowed);
    this.kinds = this.allowed.isEmpty() ? ObjectKinds.none() : null;
  }

  /** Whether no kind is allowed (nothing to resolve). */
  public boolean none() {
    return allowed.isEmpty();
  }

  /**
   * The kinds, resolved now with the API server's discovery unless an earlier call did.
   *
   * @throws KubernetesClientException when the discovery fails (try again later)
   */
  public ObjectKinds resolve() {
    ObjectKinds k = kinds;
    if (k != null) {
      return k;
    }
    synchronized (this) {
      if (kinds == null) {
        kinds = ObjectKinds.resolve(client, allowed);
      }
      return kinds;
    }
  }

  /** The kinds if resolved already. */
  public Optional<ObjectKinds> resolved() {
    return Optional.ofNullable(kinds);
  }
}
