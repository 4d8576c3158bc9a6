package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonAnyGetter;
import com.fasterxml.jackson.annotation.JsonAnySetter;
import com.fasterxml.jackson.annotation.JsonInclude;
import com.fasterxml.jackson.annotation.JsonPropertyOrder;
import io.fabric8.crd.generator.annotation.PreserveUnknownFields;
import io.fabric8.generator.annotation.Required;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * One entry of {@code spec.instanceObjects}: a Kubernetes manifest (any kind) that the controller
 * renders once per Instance ({@link InstanceObjectPlaceholders}). The CRD requires {@code
 * apiVersion} and {@code kind} and keeps everything else as written ({@code
 * x-kubernetes-preserve-unknown-fields}); the API server checks the rendered object when the
 * controller creates it.
 */
@PreserveUnknownFields
@JsonInclude(JsonInclude.Include.NON_NULL)
@JsonPropertyOrder({"apiVersion", "kind"})
public class InstanceObjectTemplate {

  @Required private String apiVersion;

  @Required private String kind;

  private final Map<String, Object> rest = new LinkedHashMap<>();

  public String getApiVersion() {
    return apiVersion;
  }

  public void setApiVersion(String apiVersion) {
    this.apiVersion = apiVersion;
  }

  public String getKind() {
    return kind;
  }

  public void setKind(String kind) {
    this.kind = kind;
  }

  /** Every field but {@code apiVersion} and {@code kind}, as parsed (maps, lists, scalars). */
  @JsonAnyGetter
  public Map<String, Object> otherFields() {
    return rest;
  }

  @JsonAnySetter
  public void otherField(String field, Object value) {
    rest.put(field, value);
  }

  /** The whole manifest as a tree, {@code apiVersion} and {@code kind} first. A fresh map. */
  public Map<String, Object> toMap() {
    Map<String, Object> all = new LinkedHashMap<>();
    all.put("apiVersion", apiVersion);
    all.put("kind", kind);
    all.putAll(rest);
    return all;
  }

  @Override
  public boolean equals(Object o) {
    return o instanceof InstanceObjectTemplate t
        && Objects.equals(apiVersion, t.apiVersion)
        && Objects.equals(kind, t.kind)
        && rest.equals(t.rest);
  }

  @Override
  public int hashCode() {
    return Objects.hash(apiVersion, kind, rest);
  }
}
