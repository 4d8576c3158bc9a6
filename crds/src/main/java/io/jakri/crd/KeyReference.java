package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;

/**
 * A key in a Secret or ConfigMap; {@code namespace} defaults to the Configuration's, {@code
 * optional} means a missing object or key yields no property instead of an error.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class KeyReference {

  @Required private String name;

  private String namespace;

  @Required private String key;

  private Boolean optional;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getNamespace() {
    return namespace;
  }

  public void setNamespace(String namespace) {
    this.namespace = namespace;
  }

  public String getKey() {
    return key;
  }

  public void setKey(String key) {
    this.key = key;
  }

  public Boolean getOptional() {
    return optional;
  }

  public void setOptional(Boolean optional) {
    this.optional = optional;
  }
}
