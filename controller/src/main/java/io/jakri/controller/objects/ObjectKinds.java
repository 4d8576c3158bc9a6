package io.jakri.controller.objects;

import io.fabric8.kubernetes.api.model.APIGroup;
import io.fabric8.kubernetes.api.model.APIResource;
import io.fabric8.kubernetes.api.model.APIResourceList;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.jakri.crd.InstanceObjectPlaceholders;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kinds the controller may create per Instance: the operator's {@link AllowedResource}s,
 * resolved once against the API server's discovery documents at start. A template's {@code
 * apiVersion} and {@code kind} are looked up here; anything else is refused with a message that
 * says which flag allows it. Immutable after {@link #resolve}; thread-safe.
 */
public final class ObjectKinds {

  private static final Logger LOG = LoggerFactory.getLogger(ObjectKinds.class);

  /** The result of a lookup. */
  public sealed interface Lookup permits Lookup.Served, Lookup.Refused {
    /** The kind is allowed and served. */
    record Served(ServedResource resource) implements Lookup {}

    /** Not allowed, or allowed but not served; the message says why in one line. */
    record Refused(String message) implements Lookup {}
  }

  private final List<AllowedResource> allowed;
  private final List<ServedResource> served;
  private final Map<AllowedResource, String> unserved;

  private ObjectKinds(
      List<AllowedResource> allowed,
      List<ServedResource> served,
      Map<AllowedResource, String> unserved) {
    this.allowed = List.copyOf(allowed);
    this.served = List.copyOf(served);
    this.unserved = Map.copyOf(unserved);
  }

  /** Kinds as {@link #resolve} would find them (tests). */
  public static ObjectKinds of(
      List<AllowedResource> allowed,
      List<ServedResource> served,
      Map<AllowedResource, String> unserved) {
    return new ObjectKinds(allowed, served, unserved);
  }

  /** No kind allowed (the default). */
  public static ObjectKinds none() {
    return new ObjectKinds(List.of(), List.of(), Map.of());
  }

  /**
   * Resolves {@code allowed} with the API server's discovery (one request per group and one per
   * group version). A resource the server does not serve (its CRD not installed) is refused in
   * lookups ({@link KindDiscovery} asks again while there is one, and logs).
   *
   * @throws io.fabric8.kubernetes.client.KubernetesClientException when the server cannot be
   *     reached (the caller retries)
   */
  public static ObjectKinds resolve(KubernetesClient client, List<AllowedResource> allowed) {
    List<ServedResource> served = new ArrayList<>();
    Map<AllowedResource, String> unserved = new java.util.LinkedHashMap<>();
    Map<String, List<AllowedResource>> byGroup =
        allowed.stream()
            .collect(
                Collectors.groupingBy(
                    AllowedResource::group, java.util.LinkedHashMap::new, Collectors.toList()));
    byGroup.forEach(
        (group, resources) -> {
          String version;
          if (group.isEmpty()) {
            version = "v1";
          } else {
            APIGroup g = client.getApiGroup(group);
            if (g == null || g.getPreferredVersion() == null) {
              resources.forEach(r -> unserved.put(r, "the API server serves no group " + group));
              return;
            }
            version = g.getPreferredVersion().getVersion();
          }
          String groupVersion = group.isEmpty() ? version : group + "/" + version;
          APIResourceList list = client.getApiResources(groupVersion);
          for (AllowedResource r : resources) {
            APIResource found =
                list == null
                    ? null
                    : list.getResources().stream()
                        .filter(a -> a.getName().equals(r.resource()))
                        .findFirst()
                        .orElse(null);
            if (found == null) {
              unserved.put(r, "the API server serves no " + r.resource() + " in " + groupVersion);
            } else {
              served.add(
                  new ServedResource(
                      group,
                      version,
                      r.resource(),
                      found.getKind(),
                      Boolean.TRUE.equals(found.getNamespaced())));
            }
          }
        });
    return new ObjectKinds(allowed, served, unserved);
  }

  /** Logs what the kinds are: each unserved one as a warning, the served ones in one line. */
  void log(String unservedSuffix) {
    unserved.forEach(
        (r, why) -> LOG.warn("--instance-object-resources {}: {}; {}", r, why, unservedSuffix));
    if (!served.isEmpty()) {
      LOG.info("instance objects may be: {}", ServedResource.describe(served));
    }
  }

  /** Whether some allowed resource is not served (yet). */
  public boolean anyUnserved() {
    return !unserved.isEmpty();
  }

  /** The allowed resources the API server serves (the controller watches each). */
  public List<ServedResource> served() {
    return served;
  }

  /** Whether {@code apiVersion}/{@code kind} may be created, and where. */
  public Lookup lookup(String apiVersion, String kind) {
    String group = InstanceObjectPlaceholders.group(apiVersion);
    for (ServedResource s : served) {
      if (s.group().equals(group) && s.kind().equals(kind)) {
        return new Lookup.Served(s);
      }
    }
    String notServed =
        unserved.isEmpty()
            ? ""
            : "; not served by the API server: "
                + String.join(
                    ", ",
                    unserved.entrySet().stream()
                        .map(e -> e.getKey() + " (" + e.getValue() + ")")
                        .toList());
    return new Lookup.Refused(
        kind
            + " ("
            + apiVersion
            + ") is not among the kinds the controller may create"
            + (allowed.isEmpty()
                ? " (--instance-object-resources is empty)"
                : " (--instance-object-resources: "
                    + String.join(", ", allowed.stream().map(AllowedResource::toString).toList())
                    + ")")
            + notServed);
  }
}
