package io.jakri.handler.staticmapping;

import io.jakri.handler.Details;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Names;
import io.jakri.handler.Parsed;
import io.jakri.handler.Problems;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;

/**
 * A checked Spookd {@code deviceMapping}: every distinct device (by resource name and instance id)
 * with the union of the hosts that list it.
 *
 * @param devices the devices in order of first appearance
 */
record DeviceMapping(List<StaticDevice> devices) {

  /** Property carrying the instance id, as Spookd sets it. */
  static final String ID_PROPERTY = "ID";

  /** Property carrying the resource name, as Spookd sets it. */
  static final String TYPE_PROPERTY = "TYPE";

  private static final int MAX_INSTANCE_ID = 253;

  DeviceMapping {
    devices = List.copyOf(devices);
  }

  /**
   * One device of the mapping.
   *
   * @param resourceName its extended resource name, also its class
   * @param instanceId its instance id, exactly as written
   * @param env environment for containers that get it
   * @param hosts the nodes that see it
   */
  record StaticDevice(
      String resourceName, String instanceId, Map<String, String> env, Set<String> hosts) {

    StaticDevice {
      env = Map.copyOf(env);
      hosts = Set.copyOf(hosts);
    }

    /** {@code <resourceName>/<instanceID>}: unique, because a resource name has exactly one '/'. */
    String id() {
      return resourceName + "/" + instanceId;
    }

    /** The device as reported: shared, classed by its resource name, env plus ID and TYPE. */
    DiscoveredDevice toDiscovered() {
      Map<String, String> properties = new LinkedHashMap<>(env);
      properties.put(ID_PROPERTY, instanceId);
      properties.put(TYPE_PROPERTY, resourceName);
      return new DiscoveredDevice(
          id(), properties, List.of(), List.of(), Map.of(), Optional.of(resourceName), true);
    }
  }

  /** The devices that {@code nodeName} sees, in order of first appearance. */
  List<DiscoveredDevice> devicesFor(String nodeName) {
    return devices.stream()
        .filter(device -> device.hosts().contains(nodeName))
        .map(StaticDevice::toDiscovered)
        .toList();
  }

  /** Reads YAML details. Never throws: every problem is an error or warning naming its field. */
  static Parsed<DeviceMapping> parse(String yaml) {
    Details details;
    try {
      details = Details.of("", VerbatimYaml.loadMap(yaml));
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of(e.getMessage()), List.of());
    }
    Problems problems = new Problems();
    if (!details.has("deviceMapping")) {
      problems.error(
          details.field("deviceMapping")
              + " is required: a list of {hosts: [...], devices: [...]} entries");
    }
    List<Details> mappings =
        problems.read(() -> details.objectList("deviceMapping")).orElse(List.of());
    if (mappings.isEmpty() && details.has("deviceMapping")) {
      problems.warn(details.field("deviceMapping") + " is empty: no node sees any device");
    }
    Map<DeviceKey, Seen> seen = new LinkedHashMap<>();
    for (Details mapping : mappings) {
      readMapping(mapping, seen, problems);
    }
    details.unknownKeys().forEach(key -> problems.warn(key + " is not a known field; ignored"));
    if (!problems.errors().isEmpty()) {
      return Parsed.failed(problems.errors(), problems.warnings());
    }
    List<StaticDevice> devices = new ArrayList<>();
    seen.forEach(
        (key, entry) ->
            devices.add(
                new StaticDevice(key.resourceName(), key.instanceId(), entry.env, entry.hosts)));
    return Parsed.of(new DeviceMapping(devices), problems.warnings());
  }

  /** Identity of a device across mappings. */
  private record DeviceKey(String resourceName, String instanceId) {}

  /** Where a device was first listed, its env, and every host listing it so far. */
  private static final class Seen {
    final String place;
    final Map<String, String> env;
    final Set<String> hosts = new LinkedHashSet<>();

    Seen(String place, Map<String, String> env) {
      this.place = place;
      this.env = env;
    }
  }

  private static void readMapping(Details mapping, Map<DeviceKey, Seen> seen, Problems problems) {
    List<String> hosts = problems.read(() -> mapping.stringList("hosts")).orElse(null);
    if (hosts != null && hosts.isEmpty()) {
      problems.error(mapping.field("hosts") + " must list at least one host");
    }
    List<String> usableHosts = new ArrayList<>();
    for (int i = 0; hosts != null && i < hosts.size(); i++) {
      String host = hosts.get(i);
      String field = mapping.field("hosts") + "[" + i + "]";
      if (host.isBlank()) {
        problems.error(field + " must not be empty");
      } else if (!Names.isDnsSubdomain(host)) {
        problems.warn(
            field
                + " \""
                + host
                + "\" is not a valid node name (a lowercase DNS subdomain), so no node will see"
                + " its devices");
      } else {
        usableHosts.add(host);
      }
    }
    List<Details> devices = problems.read(() -> mapping.objectList("devices")).orElse(null);
    if (devices != null && devices.isEmpty()) {
      problems.warn(mapping.field("devices") + " is empty: this mapping adds no device");
    }
    for (int j = 0; devices != null && j < devices.size(); j++) {
      String place = mapping.field("devices") + "[" + j + "]";
      readDevice(devices.get(j), place, usableHosts, seen, problems);
    }
    mapping.unknownKeys().forEach(key -> problems.warn(key + " is not a known field; ignored"));
  }

  private static void readDevice(
      Details device,
      String place,
      List<String> hosts,
      Map<DeviceKey, Seen> seen,
      Problems problems) {
    Optional<String> resourceName = readResourceName(device, problems);
    Optional<String> instanceId = readInstanceId(device, problems);
    Optional<Map<String, String>> env = problems.read(() -> device.stringMap("env"));
    boolean envValid = env.isPresent() && checkEnv(device, env.get(), problems);
    device.unknownKeys().forEach(key -> problems.warn(key + " is not a known field; ignored"));
    if (resourceName.isEmpty() || instanceId.isEmpty() || !envValid) {
      return;
    }
    DeviceKey key = new DeviceKey(resourceName.get(), instanceId.get());
    Seen earlier = seen.get(key);
    if (earlier == null) {
      Seen entry = new Seen(place, env.get());
      entry.hosts.addAll(hosts);
      seen.put(key, entry);
    } else if (!earlier.env.equals(env.get())) {
      problems.error(
          place
              + " lists "
              + key.resourceName()
              + " instance \""
              + key.instanceId()
              + "\" with a different env than "
              + earlier.place
              + ": a device listed more than once must have the same env everywhere");
    } else {
      earlier.hosts.addAll(hosts);
    }
  }

  private static Optional<String> readResourceName(Details device, Problems problems) {
    String field = device.field("resourceName");
    Optional<String> name = problems.readOptional(() -> device.optionalString("resourceName"));
    if (name.isEmpty()) {
      if (!device.has("resourceName")) {
        problems.error(field + " is required");
      }
      return Optional.empty();
    }
    if (name.get().isBlank()) {
      problems.error(field + " must not be empty");
      return Optional.empty();
    }
    Optional<String> problem = Names.extendedResourceProblem(name.get());
    problem.ifPresent(why -> problems.error(field + " \"" + name.get() + "\" " + why));
    return problem.isPresent() ? Optional.empty() : name;
  }

  private static Optional<String> readInstanceId(Details device, Problems problems) {
    String field = device.field("instanceID");
    Optional<String> id = problems.readOptional(() -> device.optionalString("instanceID"));
    if (id.isEmpty()) {
      if (!device.has("instanceID")) {
        problems.error(field + " is required");
      }
      return Optional.empty();
    }
    if (id.get().isBlank()) {
      problems.error(field + " must not be empty");
      return Optional.empty();
    }
    if (id.get().length() > MAX_INSTANCE_ID) {
      problems.error(field + " must be at most " + MAX_INSTANCE_ID + " characters");
      return Optional.empty();
    }
    return id;
  }

  private static boolean checkEnv(Details device, Map<String, String> env, Problems problems) {
    boolean valid = true;
    for (String name : env.keySet()) {
      String field = device.field("env") + "." + name;
      if (!Names.isEnvName(name)) {
        problems.error(
            field + " is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
        valid = false;
      } else if (name.equals(ID_PROPERTY) || name.equals(TYPE_PROPERTY)) {
        problems.error(
            field
                + " is reserved: the handler sets ID to the instanceID and TYPE to the"
                + " resourceName");
        valid = false;
      }
    }
    return valid;
  }
}
