package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import io.fabric8.kubernetes.api.model.KubernetesResourceList;
import io.fabric8.kubernetes.client.dsl.MixedOperation;
import io.fabric8.kubernetes.client.dsl.Resource;
import io.fabric8.kubernetes.client.informers.SharedIndexInformer;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;

/**
 * The namespaces cluster mode watches: every namespace (the default, as Akri does), or only the
 * listed ones.
 *
 * @param only the namespaces to watch; empty means every namespace
 */
public record WatchedNamespaces(List<String> only) {

  public WatchedNamespaces {
    only = List.copyOf(Objects.requireNonNull(only, "only"));
  }

  /** Every namespace. */
  public static WatchedNamespaces all() {
    return new WatchedNamespaces(List.of());
  }

  /** Only these namespaces. */
  public static WatchedNamespaces of(String... namespaces) {
    return new WatchedNamespaces(List.of(namespaces));
  }

  /** Whether every namespace is watched. */
  public boolean isAll() {
    return only.isEmpty();
  }

  /** Whether objects in {@code namespace} are watched. */
  public boolean includes(String namespace) {
    return isAll() || only.contains(namespace);
  }

  /** For log lines: {@code all namespaces} or {@code namespaces a, b}. */
  public String describe() {
    return isAll() ? "all namespaces" : "namespace(s) " + String.join(", ", only);
  }

  /**
   * Informers (not started) over {@code resources}: one across all namespaces, or one per listed
   * namespace.
   */
  public <T extends HasMetadata, L extends KubernetesResourceList<T>>
      List<SharedIndexInformer<T>> informers(MixedOperation<T, L, Resource<T>> resources) {
    if (isAll()) {
      return List.of(resources.inAnyNamespace().runnableInformer(0));
    }
    List<SharedIndexInformer<T>> informers = new ArrayList<>();
    for (String namespace : only) {
      informers.add(resources.inNamespace(namespace).runnableInformer(0));
    }
    return informers;
  }
}
