package io.jakri.controller.objects;

import io.fabric8.kubernetes.client.dsl.base.ResourceDefinitionContext;

/**
 * An allowed resource as the API server serves it (from its discovery documents): group, preferred
 * version, plural, kind and scope.
 */
public record ServedResource(
    String group, String version, String resource, String kind, boolean namespaced) {

  /** The context of requests for this resource in {@code apiVersion}'s version. */
  public ResourceDefinitionContext context(String apiVersion) {
    int slash = apiVersion.indexOf('/');
    return new ResourceDefinitionContext.Builder()
        .withGroup(group)
        .withVersion(slash < 0 ? apiVersion : apiVersion.substring(slash + 1))
        .withPlural(resource)
        .withKind(kind)
        .withNamespaced(namespaced)
        .build();
  }

  /** The context in the preferred version (what the controller's informer watches). */
  public ResourceDefinitionContext context() {
    return context(group.isEmpty() ? version : group + "/" + version);
  }

  /** {@code resource[.group]}, as the flag names it. */
  public String name() {
    return group.isEmpty() ? resource : resource + "." + group;
  }

  /** Each kind with its flag name, {@code Kind (resource[.group])}, for log lines. */
  static java.util.List<String> describe(java.util.List<ServedResource> kinds) {
    return kinds.stream().map(s -> s.kind() + " (" + s.name() + ")").toList();
  }
}
