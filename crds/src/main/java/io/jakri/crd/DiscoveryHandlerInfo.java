package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Required;
import java.util.ArrayList;
import java.util.List;

/**
 * {@code spec.discoveryHandler}: the handler's name, its details (YAML text the handler parses) and
 * properties resolved by the agent.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class DiscoveryHandlerInfo {

  @Required private String name;

  private String discoveryDetails = "";

  private List<DiscoveryProperty> discoveryProperties = new ArrayList<>();

  public String getName() {
    return name;
  }

  public void setName(String name) {
    this.name = name;
  }

  public String getDiscoveryDetails() {
    return discoveryDetails;
  }

  public void setDiscoveryDetails(String discoveryDetails) {
    this.discoveryDetails = discoveryDetails;
  }

  public List<DiscoveryProperty> getDiscoveryProperties() {
    return discoveryProperties;
  }

  public void setDiscoveryProperties(List<DiscoveryProperty> discoveryProperties) {
    this.discoveryProperties = discoveryProperties;
  }
}
