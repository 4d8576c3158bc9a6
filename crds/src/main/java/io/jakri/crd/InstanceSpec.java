package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.generator.annotation.Min;
import io.fabric8.generator.annotation.Required;
import io.fabric8.generator.annotation.Size;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The spec of an {@link Instance}.
 *
 * <p>{@code deviceUsage} maps each slot id {@code <instance>-<n>} to {@code ""} (free), {@code
 * "<node>"}, {@code "C:<vdev>:<node>"} or (a ResourceClaim prepared through DRA) {@code "D:<claim
 * uid>:<node>"}.
 *
 * <p>The CRD requires {@code configurationName} (1..56 characters), {@code cdiName} ({@code
 * akri.sh/<configuration>=<id>}, as Akri's agent writes it) and {@code capacity} (at least 1), as
 * Akri's Instance CRD requires the three; it bounds node names to 253 and {@code deviceUsage}
 * values to 512 characters. Like Akri's, {@code nodes} is a server-side-apply set and {@code
 * deviceUsage} a granular map.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class InstanceSpec {

  @Required
  @Size(min = 1, max = Configuration.MAX_NAME_LENGTH)
  private String configurationName;

  @Required private String cdiName;

  @Required
  @Min(1)
  private Integer capacity = 1;

  private Map<String, String> brokerProperties = new LinkedHashMap<>();

  private Boolean shared = false;

  @ListType("set")
  private List<@Size(min = 1, max = 253) String> nodes = new ArrayList<>();

  @MapType("granular")
  private Map<String, @Size(max = 512) String> deviceUsage = new LinkedHashMap<>();

  public String getConfigurationName() {
    return configurationName;
  }

  public void setConfigurationName(String configurationName) {
    this.configurationName = configurationName;
  }

  public String getCdiName() {
    return cdiName;
  }

  public void setCdiName(String cdiName) {
    this.cdiName = cdiName;
  }

  public Integer getCapacity() {
    return capacity;
  }

  public void setCapacity(Integer capacity) {
    this.capacity = capacity;
  }

  public Map<String, String> getBrokerProperties() {
    return brokerProperties;
  }

  public void setBrokerProperties(Map<String, String> brokerProperties) {
    this.brokerProperties = brokerProperties;
  }

  public Boolean getShared() {
    return shared;
  }

  public void setShared(Boolean shared) {
    this.shared = shared;
  }

  public List<String> getNodes() {
    return nodes;
  }

  public void setNodes(List<String> nodes) {
    this.nodes = nodes;
  }

  public Map<String, String> getDeviceUsage() {
    return deviceUsage;
  }

  public void setDeviceUsage(Map<String, String> deviceUsage) {
    this.deviceUsage = deviceUsage;
  }
}
