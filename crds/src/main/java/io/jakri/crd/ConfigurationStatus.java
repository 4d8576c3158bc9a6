package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;
import io.fabric8.kubernetes.api.model.Condition;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * jakri's addition to the Configuration: conditions ({@code Discovering}, {@code Invalid}, {@code
 * HandlerMissing}, {@code Failed}), the number of Instances, and each node's own view (written by
 * that node's agent only, so agents never overwrite each other).
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class ConfigurationStatus {

  private Long observedGeneration;

  private List<Condition> conditions = new ArrayList<>();

  private Integer instances;

  private Map<String, NodeDiscoveryStatus> nodes = new LinkedHashMap<>();

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public List<Condition> getConditions() {
    return conditions;
  }

  public void setConditions(List<Condition> conditions) {
    this.conditions = conditions;
  }

  public Integer getInstances() {
    return instances;
  }

  public void setInstances(Integer instances) {
    this.instances = instances;
  }

  public Map<String, NodeDiscoveryStatus> getNodes() {
    return nodes;
  }

  public void setNodes(Map<String, NodeDiscoveryStatus> nodes) {
    this.nodes = nodes;
  }
}
