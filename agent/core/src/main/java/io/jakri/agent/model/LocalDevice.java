package io.jakri.agent.model;

import io.jakri.handler.DiscoveredDevice;

/**
 * A device this node's discovery reports (or reported, while {@code online} is false during the
 * offline grace period), with the Instance it belongs to.
 */
public record LocalDevice(
    String instanceName, ConfigurationSpec configuration, DiscoveredDevice device, boolean online) {

  /** The Instance's own resource: {@code akri.sh/<instance>}. */
  public String instanceResource() {
    return "akri.sh/" + instanceName;
  }

  /** The class resource the device belongs to: the handler's class or the Configuration's. */
  public String classResource() {
    return device.deviceClass().orElse(configuration.defaultClass());
  }

  /** Whether the device is in its Configuration's default class {@code akri.sh/<config>}. */
  public boolean inDefaultClass() {
    return classResource().equals(configuration.defaultClass());
  }

  public LocalDevice withOnline(boolean value) {
    return new LocalDevice(instanceName, configuration, device, value);
  }
}
