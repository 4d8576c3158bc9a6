package io.jakri.agent.cluster;

import io.fabric8.kubernetes.api.model.HasMetadata;
import java.util.Objects;

/**
 * The object an Event is about ({@code involvedObject}).
 *
 * @param apiVersion e.g. {@code akri.sh/v0}, {@code v1}
 * @param kind e.g. {@code Configuration}, {@code Instance}, {@code Node}
 * @param namespace empty for cluster-scoped objects (Nodes)
 * @param name the object's name
 * @param uid the object's UID, empty when not known (the Event then matches by name only)
 */
public record ObjectRef(String apiVersion, String kind, String namespace, String name, String uid) {

  /** API version of jakri's (and Akri's) resources. */
  public static final String AKRI_API_VERSION = "akri.sh/v0";

  public ObjectRef {
    Objects.requireNonNull(apiVersion, "apiVersion");
    Objects.requireNonNull(kind, "kind");
    Objects.requireNonNull(namespace, "namespace");
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(uid, "uid");
    if (name.isEmpty()) {
      throw new IllegalArgumentException("name must not be empty");
    }
  }

  /** A {@code configurations.akri.sh} object. */
  public static ObjectRef configuration(String namespace, String name, String uid) {
    return new ObjectRef(AKRI_API_VERSION, "Configuration", namespace, name, uid);
  }

  /** An {@code instances.akri.sh} object. */
  public static ObjectRef instance(String namespace, String name, String uid) {
    return new ObjectRef(AKRI_API_VERSION, "Instance", namespace, name, uid);
  }

  /** A Node (cluster-scoped). */
  public static ObjectRef node(String name, String uid) {
    return new ObjectRef("v1", "Node", "", name, uid);
  }

  /** The reference to a resource read from (or written to) the API server. */
  public static ObjectRef of(HasMetadata resource) {
    var metadata = resource.getMetadata();
    return new ObjectRef(
        resource.getApiVersion(),
        resource.getKind(),
        Objects.requireNonNullElse(metadata.getNamespace(), ""),
        metadata.getName(),
        Objects.requireNonNullElse(metadata.getUid(), ""));
  }

  /** {@code kind(namespace/name)}, for log lines. */
  @Override
  public String toString() {
    return kind + "(" + (namespace.isEmpty() ? "" : namespace + "/") + name + ")";
  }
}
