package io.jakri.broker.device;

import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * One device a container was given: its properties (device properties merged with the
 * Configuration's {@code brokerProperties}, DESIGN §5), sorted by name, names unique.
 *
 * @param properties at most {@value DeviceEnv#MAX_PROPERTIES}
 */
public record Device(List<Property> properties) {

  public Device {
    properties = properties.stream().sorted(Comparator.comparing(Property::name)).toList();
    if (properties.size() > DeviceEnv.MAX_PROPERTIES) {
      throw new IllegalArgumentException("more than " + DeviceEnv.MAX_PROPERTIES + " properties");
    }
    Set<String> names = new HashSet<>();
    for (Property p : properties) {
      if (!names.add(p.name())) {
        throw new IllegalArgumentException("property " + p.name() + " given twice");
      }
    }
  }

  /** A device from a name → value map (e.g. in tests); every entry must make a valid property. */
  public static Device of(Map<String, String> properties) {
    return new Device(
        properties.entrySet().stream().map(e -> new Property(e.getKey(), e.getValue())).toList());
  }

  /** The value of property {@code name}, if the device has it. */
  public Optional<String> property(String name) {
    return properties.stream().filter(p -> p.name().equals(name)).map(Property::value).findFirst();
  }

  /** The properties as an ordered map (by name). */
  public Map<String, String> asMap() {
    Map<String, String> map = new LinkedHashMap<>();
    properties.forEach(p -> map.put(p.name(), p.value()));
    return map;
  }
}
