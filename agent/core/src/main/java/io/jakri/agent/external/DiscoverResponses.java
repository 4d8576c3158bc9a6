package io.jakri.agent.external;

import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.model.EnvContract;
import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import v0.Discovery.DiscoverResponse;

/**
 * Akri's {@code DiscoverResponse} as the agent's devices: at most {@link
 * DiscoveryManager#MAX_DEVICES} of them, without properties a container could never get (each cut
 * logged once per response).
 */
final class DiscoverResponses {

  // ExternalDiscovery's logger: these lines were always its.
  private static final Logger LOG = LoggerFactory.getLogger(ExternalDiscovery.class);

  private DiscoverResponses() {}

  /** Akri's device, as the agent's: properties a container could never get are left out. */
  static List<DiscoveredDevice> devices(
      DiscoverResponse response, boolean shared, String configuration, ExternalEndpoint from) {
    int count = response.getDevicesCount();
    int taken = Math.min(count, DiscoveryManager.MAX_DEVICES);
    List<DiscoveredDevice> devices = new ArrayList<>(taken);
    int droppedProperties = 0;
    for (int i = 0; i < taken; i++) {
      v0.Discovery.Device d = response.getDevices(i);
      Map<String, String> properties = new LinkedHashMap<>();
      for (Map.Entry<String, String> p : d.getPropertiesMap().entrySet()) {
        if (p.getKey().length() <= EnvContract.MAX_NAME_LENGTH
            && p.getValue().length() <= EnvContract.MAX_VALUE_LENGTH) {
          properties.put(p.getKey(), p.getValue());
        } else {
          droppedProperties++;
        }
      }
      devices.add(
          new DiscoveredDevice(
              d.getId(),
              properties,
              d.getMountsList().stream()
                  .map(
                      m ->
                          new DiscoveredDevice.Mount(
                              m.getContainerPath(), m.getHostPath(), m.getReadOnly()))
                  .toList(),
              d.getDeviceSpecsList().stream()
                  .map(
                      s ->
                          new DiscoveredDevice.DeviceSpec(
                              s.getContainerPath(), s.getHostPath(), s.getPermissions()))
                  .toList(),
              Map.of(),
              Optional.empty(),
              shared));
    }
    if (count > taken) {
      LOG.warn(
          "configuration {}: handler {} at {} reported {} devices; only the first {} are used",
          configuration,
          from.name(),
          from.endpoint(),
          count,
          taken);
    }
    if (droppedProperties > 0) {
      LOG.warn(
          "configuration {}: handler {} at {} reported {} properties longer than {} characters"
              + " (name) or {} (value); they are left out",
          configuration,
          from.name(),
          from.endpoint(),
          droppedProperties,
          EnvContract.MAX_NAME_LENGTH,
          EnvContract.MAX_VALUE_LENGTH);
    }
    return devices;
  }
}
