package io.jakri.agent.discovery;

import io.jakri.agent.model.EnvContract;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.logging.LogText;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A snapshot's device properties and device env held against what reaches a container ({@link
 * EnvContract}): bounds what a device carries, and reports, once per Configuration and name, each
 * entry that never reaches a container. One per {@link DeviceTable}; not thread-safe.
 */
final class DeviceProperties {

  /** Dropped property names reported per Configuration; more are dropped without a warning each. */
  static final int MAX_DROPPED_LOGGED = 100;

  private final Set<String> droppedLogged = new HashSet<>();

  /**
   * Adds to {@code warnings}, once per Configuration and name, each device property or entry of a
   * device's own env that never reaches a container (DESIGN §5: invalid or reserved names, NUL
   * characters, over-long values).
   */
  void dropped(Collection<DiscoveredDevice> seen, List<String> warnings) {
    for (DiscoveredDevice device : seen) {
      for (Map.Entry<String, String> p : device.properties().entrySet()) {
        Optional<String> reason = EnvContract.dropReason(p.getKey(), p.getValue(), false);
        if (reason.isPresent()
            && droppedLogged.size() < MAX_DROPPED_LOGGED
            && droppedLogged.add(p.getKey())) {
          warnings.add(
              "device property "
                  + LogText.quote(p.getKey())
                  + " is not given to containers: "
                  + reason.get());
        }
      }
      for (Map.Entry<String, String> e : device.env().entrySet()) {
        Optional<String> reason = EnvContract.deviceEnvDropReason(e.getKey(), e.getValue());
        if (reason.isPresent()
            && droppedLogged.size() < MAX_DROPPED_LOGGED
            && droppedLogged.add(e.getKey())) {
          warnings.add(
              "device env "
                  + LogText.quote(e.getKey())
                  + " is not given to containers: "
                  + reason.get());
        }
      }
    }
  }

  /**
   * A device with more than {@link EnvContract#MAX_PROPERTIES} properties (or env entries of its
   * own) keeps only those a container could ever see (the same selection Allocate makes), so a
   * handler reporting millions of properties costs no more than one reporting the maximum.
   */
  static DiscoveredDevice bounded(DiscoveredDevice device) {
    if (device.properties().size() <= EnvContract.MAX_PROPERTIES
        && device.env().size() <= EnvContract.MAX_PROPERTIES) {
      return device;
    }
    return new DiscoveredDevice(
        device.id(),
        device.properties().size() <= EnvContract.MAX_PROPERTIES
            ? device.properties()
            : EnvContract.mergedProperties(device.properties(), Map.of()),
        device.mounts(),
        device.deviceSpecs(),
        device.annotations(),
        device.deviceClass(),
        device.shared(),
        device.env().size() <= EnvContract.MAX_PROPERTIES
            ? device.env()
            : EnvContract.deviceEnv(device.env()));
  }
}
