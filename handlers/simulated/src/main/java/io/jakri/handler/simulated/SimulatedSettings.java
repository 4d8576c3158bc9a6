package io.jakri.handler.simulated;

import io.jakri.handler.Details;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.DiscoveredDevice.DeviceSpec;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Names;
import io.jakri.handler.Parsed;
import io.jakri.handler.Problems;
import java.nio.file.InvalidPathException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.function.Function;
import java.util.regex.Pattern;

/**
 * The simulated handler's discovery details, checked.
 *
 * @param naming how many devices there are and what they are called
 * @param resourceName the class resource every device belongs to; empty for the Configuration's
 *     default class
 * @param properties properties given to every device
 * @param shared whether the devices are visible from every node (then the node name does not enter
 *     the Instance name)
 * @param envPrefix when set, a container given a device gets the env var {@code <envPrefix>_<device
 *     id>=/dev/<index>} (the simple device plugin's {@code ENV_PREFIX})
 * @param annotationPrefix when set, a container given a device gets the annotation {@code
 *     <annotationPrefix>-<device id>} with an empty value ({@code ANNOTATION_PREFIX})
 * @param deviceFilePrefix when set, a container given a device gets the device node {@code
 *     /dev/<deviceFilePrefix>-<index>} at the same path ({@code DEVICE_FILE_PREFIX})
 * @param availability in debugEcho mode, the file whose content {@code OFFLINE} hides every device
 *     (Akri's availability check); empty when the check is off
 */
record SimulatedSettings(
    Naming naming,
    Optional<String> resourceName,
    Map<String, String> properties,
    boolean shared,
    Optional<String> envPrefix,
    Optional<String> annotationPrefix,
    Optional<String> deviceFilePrefix,
    Optional<Availability> availability) {

  /** Default number of devices, as in the simple device plugin ({@code NUMBER_DEVICES}). */
  static final int DEFAULT_COUNT = 2;

  /** Largest accepted {@code count}: a typo should not build millions of devices. */
  static final int MAX_COUNT = 100_000;

  /** Default device id prefix, as in the simple device plugin ({@code DEVICE_ID_PREFIX}). */
  static final String DEFAULT_ID_PREFIX = "simple-device";

  /** The property that carries a description in debugEcho mode, as in Akri. */
  static final String DESCRIPTION_PROPERTY = "DEBUG_ECHO_DESCRIPTION";

  /**
   * Akri's environment variable (set on its debugEcho handler pods by its chart) that decides
   * whether debugEcho devices are shared; read here when the details do not say {@code shared}.
   */
  static final String SHARED_ENV = "DEBUG_ECHO_INSTANCES_SHARED";

  /** Akri's availability file: content containing {@code OFFLINE} makes every device vanish. */
  static final Path DEFAULT_AVAILABILITY_FILE = Path.of("/tmp/debug-echo-availability.txt");

  /** How often the availability file is read by default. */
  static final int DEFAULT_AVAILABILITY_CHECK_SECONDS = 1;

  private static final int MAX_AVAILABILITY_CHECK_SECONDS = 3600;

  private static final Pattern FILE_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9._-]*");
  private static final Pattern ANNOTATION_PREFIX = Pattern.compile("[A-Za-z0-9][A-Za-z0-9._/-]*");
  private static final int MAX_TEXT = 253;

  SimulatedSettings {
    properties = Map.copyOf(properties);
  }

  /** How the devices are counted and named. */
  sealed interface Naming permits Counted, Described {
    int size();

    String id(String nodeName, int index);

    /** Properties that only this naming adds, for device {@code index}. */
    Map<String, String> ownProperties(int index);
  }

  /** {@code count} devices with ids {@code <idPrefix>-<node>-<index>} (simple device plugin). */
  record Counted(int count, String idPrefix) implements Naming {
    @Override
    public int size() {
      return count;
    }

    @Override
    public String id(String nodeName, int index) {
      return idPrefix + "-" + nodeName + "-" + index;
    }

    @Override
    public Map<String, String> ownProperties(int index) {
      return Map.of();
    }
  }

  /** One device per description, whose id is the description (Akri debugEcho). */
  record Described(List<String> descriptions) implements Naming {
    Described {
      descriptions = List.copyOf(descriptions);
    }

    @Override
    public int size() {
      return descriptions.size();
    }

    @Override
    public String id(String nodeName, int index) {
      return descriptions.get(index);
    }

    @Override
    public Map<String, String> ownProperties(int index) {
      return Map.of(DESCRIPTION_PROPERTY, descriptions.get(index));
    }
  }

  /**
   * Akri's debugEcho availability check: the file is read every {@code period}; while it contains
   * {@code OFFLINE} no device is reported.
   */
  record Availability(Path file, Duration period) {}

  /**
   * Where details are read: the process environment ({@link #SHARED_ENV}) and the availability file
   * used when the details name none.
   */
  record Defaults(Function<String, String> environment, Path availabilityFile) {
    /** The agent's real environment and Akri's default file. */
    static Defaults system() {
      return new Defaults(System::getenv, DEFAULT_AVAILABILITY_FILE);
    }
  }

  /**
   * Reads YAML details with {@link Defaults#system()}. Never throws: every problem is an error or
   * warning naming its field.
   */
  static Parsed<SimulatedSettings> parse(String yaml) {
    return parse(yaml, Defaults.system());
  }

  /** Reads YAML details. Never throws: every problem is an error or warning naming its field. */
  static Parsed<SimulatedSettings> parse(String yaml, Defaults defaults) {
    Details details;
    try {
      details = Details.parse(yaml);
    } catch (InvalidDetailsException e) {
      return Parsed.failed(List.of(e.getMessage()), List.of());
    }
    Problems problems = new Problems();
    Naming naming = readNaming(details, problems);
    Optional<String> resourceName =
        problems.readOptional(() -> details.optionalString("resourceName"));
    resourceName.ifPresent(
        name ->
            Names.extendedResourceProblem(name)
                .ifPresent(
                    why ->
                        problems.error(
                            details.field("resourceName") + " \"" + name + "\" " + why)));
    Map<String, String> properties =
        problems.read(() -> details.stringMap("properties")).orElse(Map.of());
    Optional<Boolean> sharedField = problems.readOptional(() -> details.optionalBoolean("shared"));
    boolean shared =
        sharedField.orElseGet(
            () -> naming instanceof Described && debugEchoShared(defaults, problems));
    Optional<Availability> availability = readAvailability(details, naming, defaults, problems);
    Optional<String> envPrefix = problems.readOptional(() -> details.optionalString("envPrefix"));
    envPrefix
        .filter(prefix -> !Names.isEnvName(prefix))
        .ifPresent(
            prefix ->
                problems.error(
                    details.field("envPrefix")
                        + " \""
                        + prefix
                        + "\" must be an environment variable name ([A-Za-z_][A-Za-z0-9_]*)"));
    Optional<String> annotationPrefix =
        problems.readOptional(() -> details.optionalString("annotationPrefix"));
    annotationPrefix
        .filter(
            prefix -> !ANNOTATION_PREFIX.matcher(prefix).matches() || prefix.length() > MAX_TEXT)
        .ifPresent(
            prefix ->
                problems.error(
                    details.field("annotationPrefix")
                        + " \""
                        + prefix
                        + "\" must be 1 to "
                        + MAX_TEXT
                        + " letters, digits, '.', '_', '/' and '-', starting with a letter or"
                        + " digit (such as example.com)"));
    Optional<String> deviceFilePrefix =
        problems.readOptional(() -> details.optionalString("deviceFilePrefix"));
    deviceFilePrefix
        .filter(prefix -> !FILE_NAME.matcher(prefix).matches() || prefix.length() > MAX_TEXT)
        .ifPresent(
            prefix ->
                problems.error(
                    details.field("deviceFilePrefix")
                        + " \""
                        + prefix
                        + "\" must be a file name of letters, digits, '.', '_' and '-'"));
    checkProperties(details, properties, naming, problems);
    envPrefix
        .filter(Names::isEnvName)
        .ifPresent(prefix -> checkEnvNames(details, prefix, naming, problems));
    details.unknownKeys().forEach(key -> problems.warn(key + " is not a known field; ignored"));
    if (!problems.errors().isEmpty()) {
      return Parsed.failed(problems.errors(), problems.warnings());
    }
    SimulatedSettings settings =
        new SimulatedSettings(
            naming,
            resourceName,
            properties,
            shared,
            envPrefix,
            annotationPrefix,
            deviceFilePrefix,
            availability);
    return Parsed.of(settings, problems.warnings());
  }

  /**
   * Whether debugEcho devices are shared when the details do not say: as Akri's debugEcho handler,
   * from {@link #SHARED_ENV} ({@code true} or {@code false}); unset means shared, the default of
   * Akri's chart.
   */
  private static boolean debugEchoShared(Defaults defaults, Problems problems) {
    String value = defaults.environment().apply(SHARED_ENV);
    if (value == null || value.isBlank()) {
      return true;
    }
    String trimmed = value.trim();
    if (trimmed.equals("true") || trimmed.equals("false")) {
      return Boolean.parseBoolean(trimmed);
    }
    problems.warn(
        "environment variable "
            + SHARED_ENV
            + " is \""
            + shorten(trimmed)
            + "\", not true or false; the devices are shared");
    return true;
  }

  /** A value from the environment fit for one log line: at most 40 printable characters. */
  private static String shorten(String value) {
    String printable = value.replaceAll("\\p{Cntrl}", "?");
    return printable.length() <= 40 ? printable : printable.substring(0, 40) + "...";
  }

  private static Optional<Availability> readAvailability(
      Details details, Naming naming, Defaults defaults, Problems problems) {
    Optional<String> file = problems.readOptional(() -> details.optionalString("availabilityFile"));
    Optional<Integer> seconds =
        problems.readOptional(() -> details.optionalInt("availabilityCheckSeconds"));
    if (!(naming instanceof Described)) {
      file.ifPresent(f -> problems.warn(onlyWithDescriptions(details, "availabilityFile")));
      seconds.ifPresent(
          s -> problems.warn(onlyWithDescriptions(details, "availabilityCheckSeconds")));
      return Optional.empty();
    }
    int period = seconds.orElse(DEFAULT_AVAILABILITY_CHECK_SECONDS);
    if (period < 1 || period > MAX_AVAILABILITY_CHECK_SECONDS) {
      problems.error(
          details.field("availabilityCheckSeconds")
              + " must be between 1 and "
              + MAX_AVAILABILITY_CHECK_SECONDS
              + " but is "
              + period);
    }
    if (file.isPresent() && file.get().isEmpty()) {
      return Optional.empty();
    }
    Path path = defaults.availabilityFile();
    if (file.isPresent()) {
      try {
        path = Path.of(file.get());
      } catch (InvalidPathException e) {
        problems.error(
            details.field("availabilityFile") + " is not a valid path: " + e.getReason());
        return Optional.empty();
      }
      if (!path.isAbsolute()) {
        problems.error(details.field("availabilityFile") + " must be an absolute path");
        return Optional.empty();
      }
    }
    return Optional.of(new Availability(path, Duration.ofSeconds(Math.max(1, period))));
  }

  private static String onlyWithDescriptions(Details details, String key) {
    return details.field(key)
        + " is only used with "
        + details.field("descriptions")
        + " (Akri's debugEcho mode); ignored";
  }

  private static Naming readNaming(Details details, Problems problems) {
    Optional<Integer> count = problems.readOptional(() -> details.optionalInt("count"));
    Optional<String> idPrefix = problems.readOptional(() -> details.optionalString("idPrefix"));
    if (details.has("descriptions")) {
      count.ifPresent(c -> problems.warn(unusedWithDescriptions(details, "count")));
      idPrefix.ifPresent(p -> problems.warn(unusedWithDescriptions(details, "idPrefix")));
      List<String> descriptions =
          problems.read(() -> details.stringList("descriptions")).orElse(List.of());
      Map<String, Integer> seen = new HashMap<>();
      for (int i = 0; i < descriptions.size(); i++) {
        String description = descriptions.get(i);
        String field = details.field("descriptions") + "[" + i + "]";
        if (description.isBlank()) {
          problems.error(field + " must not be empty: it is the device id");
        } else if (seen.containsKey(description)) {
          problems.error(
              field
                  + " repeats "
                  + details.field("descriptions")
                  + "["
                  + seen.get(description)
                  + "] (\""
                  + description
                  + "\"): descriptions are device ids and must be unique");
        } else {
          seen.put(description, i);
        }
      }
      return new Described(descriptions);
    }
    int n = count.orElse(DEFAULT_COUNT);
    if (n < 0 || n > MAX_COUNT) {
      problems.error(
          details.field("count") + " must be between 0 and " + MAX_COUNT + " but is " + n);
    }
    String prefix = idPrefix.orElse(DEFAULT_ID_PREFIX);
    if (prefix.isBlank() || prefix.length() > MAX_TEXT) {
      problems.error(details.field("idPrefix") + " must be 1 to " + MAX_TEXT + " characters");
    }
    return new Counted(Math.max(0, Math.min(n, MAX_COUNT)), prefix);
  }

  private static String unusedWithDescriptions(Details details, String key) {
    return details.field(key)
        + " is not used when "
        + details.field("descriptions")
        + " is set (one device per description)";
  }

  private static void checkProperties(
      Details details, Map<String, String> properties, Naming naming, Problems problems) {
    for (String key : properties.keySet()) {
      String field = details.field("properties") + "." + key;
      if (!Names.isEnvName(key)) {
        problems.error(
            field + " is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
      } else if (naming instanceof Described && key.equals(DESCRIPTION_PROPERTY)) {
        problems.error(field + " clashes with the property the handler sets from descriptions");
      }
    }
  }

  /**
   * Checks that every env var name {@code <envPrefix>_<device id>} is one Kubernetes accepts. Node
   * names (lowercase DNS subdomains) and indexes only add accepted characters, so the id prefix or
   * the descriptions decide.
   */
  private static void checkEnvNames(
      Details details, String envPrefix, Naming naming, Problems problems) {
    if (naming instanceof Counted counted) {
      String name = envPrefix + "_" + counted.idPrefix() + "-node-0";
      if (!Names.isContainerEnvName(name)) {
        problems.error(envNameProblem(details, envPrefix, details.field("idPrefix"), name));
      }
    } else if (naming instanceof Described described) {
      List<String> descriptions = described.descriptions();
      for (int i = 0; i < descriptions.size(); i++) {
        String name = envPrefix + "_" + descriptions.get(i);
        if (!descriptions.get(i).isBlank() && !Names.isContainerEnvName(name)) {
          problems.error(
              envNameProblem(
                  details, envPrefix, details.field("descriptions") + "[" + i + "]", name));
        }
      }
    }
  }

  private static String envNameProblem(
      Details details, String envPrefix, String idField, String name) {
    return details.field("envPrefix")
        + " \""
        + envPrefix
        + "\" with "
        + idField
        + " gives env var names such as \""
        + shorten(name)
        + "\" (<envPrefix>_<device id>) that Kubernetes does not accept: only letters, digits,"
        + " '_', '-' and '.', not starting with a digit";
  }

  /** The devices on {@code nodeName}, in index order. */
  List<DiscoveredDevice> devices(String nodeName) {
    List<DiscoveredDevice> devices = new ArrayList<>(naming.size());
    for (int index = 0; index < naming.size(); index++) {
      devices.add(device(nodeName, index));
    }
    return devices;
  }

  /**
   * Device {@code index} as the simple device plugin gives it: env {@code <envPrefix>_<id>} with
   * value {@code /dev/<index>}, annotation {@code <annotationPrefix>-<id>} with an empty value, the
   * device node {@code /dev/<deviceFilePrefix>-<index>} at the same path; each only when its prefix
   * is set.
   */
  private DiscoveredDevice device(String nodeName, int index) {
    String id = naming.id(nodeName, index);
    Map<String, String> deviceProperties = new LinkedHashMap<>(properties);
    deviceProperties.putAll(naming.ownProperties(index));
    Map<String, String> env =
        envPrefix.map(prefix -> Map.of(prefix + "_" + id, "/dev/" + index)).orElse(Map.of());
    Map<String, String> annotations =
        annotationPrefix.map(prefix -> Map.of(prefix + "-" + id, "")).orElse(Map.of());
    List<DeviceSpec> deviceSpecs =
        deviceFilePrefix
            .map(
                prefix -> {
                  String path = "/dev/" + prefix + "-" + index;
                  return List.of(new DeviceSpec(path, path, "rw"));
                })
            .orElse(List.of());
    return new DiscoveredDevice(
        id, deviceProperties, List.of(), deviceSpecs, annotations, resourceName, shared, env);
  }
}
