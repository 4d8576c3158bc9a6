package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;

/** One {@code discoveryProperties} entry: a literal {@code value} or a {@code valueFrom}. */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DiscoveryProperty {

  @Required private String name;

  private String value;

  private DiscoveryPropertySource valueFrom;

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getValue() {
    return value;
  }

  public void setValue(String value) {
    this.value = value;
  }

  public DiscoveryPropertySource getValueFrom() {
    return valueFrom;
  }

  public void setValueFrom(DiscoveryPropertySource valueFrom) {
    this.valueFrom = valueFrom;
  }
}
