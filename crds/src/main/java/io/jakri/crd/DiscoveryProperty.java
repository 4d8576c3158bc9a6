package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Pattern;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.ValidationRule;

/**
 * One {@code discoveryProperties} entry: a literal {@code value} or a {@code valueFrom}, exactly
 * one (a CEL rule in the CRD); the name must match {@link #NAME_PATTERN}.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
@ValidationRule(
    value = "has(self.value) != has(self.valueFrom)",
    message = "a discovery property sets exactly one of value and valueFrom")
public class DiscoveryProperty {

  /**
   * What a property name must match (an environment-variable-like identifier), checked by the API
   * server through the CRD schema.
   */
  public static final String NAME_PATTERN = "^[_A-Za-z][_A-Za-z0-9]*$";

  @Required
  @Pattern(NAME_PATTERN)
  private String name;

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
