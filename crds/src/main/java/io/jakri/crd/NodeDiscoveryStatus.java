package io.jakri.crd;

import com.fasterxml.jackson.annotation.JsonInclude;

/**
 * One node's discovery state for a Configuration: {@code state} is one of {@code Discovering},
 * {@code Invalid}, {@code HandlerMissing}, {@code Failed}; {@code devices} how many it sees.
 */
@JsonInclude(JsonInclude.Include.NON_NULL)
public class NodeDiscoveryStatus {

  private String state;

  private String message;

  private Integer devices;

  private Long observedGeneration;

  private String lastTransitionTime;

  public String getState() {
    return state;
  }

  public void setState(String state) {
    this.state = state;
  }

  public String getMessage() {
    return message;
  }

  public void setMessage(String message) {
    this.message = message;
  }

  public Integer getDevices() {
    return devices;
  }

  public void setDevices(Integer devices) {
    this.devices = devices;
  }

  public Long getObservedGeneration() {
    return observedGeneration;
  }

  public void setObservedGeneration(Long observedGeneration) {
    this.observedGeneration = observedGeneration;
  }

  public String getLastTransitionTime() {
    return lastTransitionTime;
  }

  public void setLastTransitionTime(String lastTransitionTime) {
    this.lastTransitionTime = lastTransitionTime;
  }
}
