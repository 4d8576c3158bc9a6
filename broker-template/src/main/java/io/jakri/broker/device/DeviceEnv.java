package io.jakri.broker.device;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The devices a container received, read from its environment by the broker contract of DESIGN §5.
 *
 * <ul>
 *   <li><b>Class resource</b> ({@code example.com/widget}, {@code akri.sh/<configuration>}): {@code
 *       <P>_NUM_DEVICES=n}, {@code <P>_DEV<i>_<K>} for each device i and property K, and {@code
 *       <P>_<K>} for device 0. Each becomes a {@link ClassGrant}.
 *   <li><b>Instance resource</b> ({@code akri.sh/<instance>}): each property as {@code K} and
 *       {@code K_<H>}, H the Instance's six-digit hash in upper case. Each hash becomes an {@link
 *       InstanceGrant}. The default class {@code akri.sh/<configuration>} sets these pairs too, one
 *       hash per device.
 * </ul>
 *
 * <p>The env is read as untrusted input: only names that are POSIX env names of at most {@value
 * #MAX_NAME_LENGTH} characters with values of at most {@value #MAX_VALUE_LENGTH} characters count;
 * at most {@value #MAX_ENTRIES} entries are looked at (in name order), a class yields at most
 * {@value #MAX_DEVICES} devices, a device at most {@value #MAX_PROPERTIES} properties, and at most
 * {@value #MAX_GRANTS} grants are returned. What is left out is counted in {@link #warnings()},
 * which never quote values. Env vars that are no device's (PATH, HOME, Service links ...) are never
 * part of the result, so showing a {@code DeviceEnv} does not leak the container's own env.
 *
 * <p>How shapes are told apart. A name ending in {@code _NUM_DEVICES} with a decimal value ≥ 1 is a
 * class, unless it is a property of a class already found (a device property named {@code
 * X_NUM_DEVICES} appears as {@code <P>_DEV0_X_NUM_DEVICES} and {@code <P>_X_NUM_DEVICES}; shorter
 * prefixes are examined first, so the real class claims them). A hash H is an Instance when some
 * {@code K_<H>} equals its {@code K} (the contract sets both to the same value), or when its
 * property names are exactly those of such an Instance (two Instances of one Configuration in one
 * container: the later plain {@code K} overwrites the earlier one's).
 *
 * @param grants classes first (by prefix), then Instances (by hash)
 * @param warnings what was left out and why, at most {@value #MAX_WARNINGS}
 */
public record DeviceEnv(List<Grant> grants, List<String> warnings) {

  /** Most env entries examined. */
  public static final int MAX_ENTRIES = 4096;

  /** Longest env var name taken, as in the agent. */
  public static final int MAX_NAME_LENGTH = 253;

  /** Longest env var value taken, in characters, as in the agent. */
  public static final int MAX_VALUE_LENGTH = 4096;

  /** Most devices read from one class grant. */
  public static final int MAX_DEVICES = 256;

  /** Most properties read for one device, as in the agent. */
  public static final int MAX_PROPERTIES = 256;

  /** Most grants returned. */
  public static final int MAX_GRANTS = 64;

  /** Most warnings kept. */
  public static final int MAX_WARNINGS = 32;

  private static final String NUM_DEVICES = "_NUM_DEVICES";
  private static final Pattern COUNT = Pattern.compile("[0-9]{1,9}");
  private static final Pattern DEVICE_PROPERTY = Pattern.compile("DEV(0|[1-9][0-9]{0,8})_(.+)");
  private static final Pattern HASHED = Pattern.compile("(.+)_([0-9A-F]{6})");

  public DeviceEnv {
    grants = List.copyOf(grants);
    warnings = List.copyOf(warnings);
  }

  /** The class grants, by prefix. */
  public List<ClassGrant> classes() {
    return grants.stream()
        .filter(ClassGrant.class::isInstance)
        .map(ClassGrant.class::cast)
        .toList();
  }

  /** The Instance grants, by hash. */
  public List<InstanceGrant> instances() {
    return grants.stream()
        .filter(InstanceGrant.class::isInstance)
        .map(InstanceGrant.class::cast)
        .toList();
  }

  /** Whether no device was found. */
  public boolean isEmpty() {
    return grants.isEmpty();
  }

  /**
   * Reads the devices from an environment such as {@link System#getenv()}. Never throws for any
   * content of {@code env}; entries with a null name or value are skipped like invalid ones. Pure
   * function.
   */
  public static DeviceEnv parse(Map<String, String> env) {
    Warnings warnings = new Warnings();
    NavigableMap<String, String> usable = usableEntries(env, warnings);
    Set<String> claimed = new HashSet<>();
    List<Grant> grants = new ArrayList<>();
    for (ClassGrant grant : classes(usable, claimed, warnings)) {
      addBounded(grants, grant, warnings);
    }
    for (InstanceGrant grant : instances(usable, claimed, warnings)) {
      addBounded(grants, grant, warnings);
    }
    return new DeviceEnv(grants, warnings.list());
  }

  private static void addBounded(List<Grant> grants, Grant grant, Warnings warnings) {
    if (grants.size() < MAX_GRANTS) {
      grants.add(grant);
    } else {
      warnings.add("more than " + MAX_GRANTS + " grants; the rest are left out");
    }
  }

  private static NavigableMap<String, String> usableEntries(
      Map<String, String> env, Warnings warnings) {
    NavigableMap<String, String> sorted = new TreeMap<>();
    int invalid = 0;
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (e.getKey() == null || e.getValue() == null) {
        invalid++;
      } else {
        sorted.put(e.getKey(), e.getValue());
      }
    }
    NavigableMap<String, String> usable = new TreeMap<>();
    int overflow = 0;
    for (Map.Entry<String, String> e : sorted.entrySet()) {
      if (!Property.isEnvName(e.getKey()) || !Property.isAcceptableValue(e.getValue())) {
        invalid++;
      } else if (usable.size() >= MAX_ENTRIES) {
        overflow++;
      } else {
        usable.put(e.getKey(), e.getValue());
      }
    }
    if (invalid > 0) {
      warnings.add(
          invalid
              + " env entries with an invalid name or a value over "
              + MAX_VALUE_LENGTH
              + " characters were ignored");
    }
    if (overflow > 0) {
      warnings.add(overflow + " env entries beyond the first " + MAX_ENTRIES + " were ignored");
    }
    return usable;
  }

  private static List<ClassGrant> classes(
      NavigableMap<String, String> env, Set<String> claimed, Warnings warnings) {
    List<String> prefixes = new ArrayList<>();
    for (Map.Entry<String, String> e : env.entrySet()) {
      String name = e.getKey();
      if (name.endsWith(NUM_DEVICES)
          && name.length() > NUM_DEVICES.length()
          && COUNT.matcher(e.getValue()).matches()
          && Long.parseLong(e.getValue()) >= 1) {
        prefixes.add(name.substring(0, name.length() - NUM_DEVICES.length()));
      }
    }
    // Shorter prefixes first: a device property named like a count is longer than its class's
    // own count and is claimed by the class before it is looked at.
    prefixes.sort(Comparator.comparingInt(String::length).thenComparing(Comparator.naturalOrder()));
    List<ClassGrant> grants = new ArrayList<>();
    for (String prefix : prefixes) {
      String countName = prefix + NUM_DEVICES;
      if (claimed.contains(countName) || !Property.isEnvName(prefix)) {
        continue;
      }
      grants.add(readClass(env, prefix, Integer.parseInt(env.get(countName)), claimed, warnings));
    }
    grants.sort(Comparator.comparing(ClassGrant::prefix));
    return grants;
  }

  private static ClassGrant readClass(
      NavigableMap<String, String> env,
      String prefix,
      int numDevices,
      Set<String> claimed,
      Warnings warnings) {
    int taken = Math.min(numDevices, MAX_DEVICES);
    if (numDevices > MAX_DEVICES) {
      warnings.add(
          prefix
              + NUM_DEVICES
              + " is "
              + numDevices
              + "; only the first "
              + MAX_DEVICES
              + " devices are read");
    }
    claimed.add(prefix + NUM_DEVICES);
    List<Map<String, String>> properties = new ArrayList<>();
    for (int i = 0; i < taken; i++) {
      properties.add(new TreeMap<>());
    }
    // All names starting with "<prefix>_": '`' is the character after '_'.
    NavigableMap<String, String> scoped = env.subMap(prefix + "_", true, prefix + "`", false);
    for (Map.Entry<String, String> e : scoped.entrySet()) {
      String rest = e.getKey().substring(prefix.length() + 1);
      Matcher m = DEVICE_PROPERTY.matcher(rest);
      if (!m.matches() || !Property.isEnvName(m.group(2))) {
        continue;
      }
      long index = Long.parseLong(m.group(1));
      if (index >= taken) {
        continue;
      }
      Map<String, String> device = properties.get((int) index);
      if (device.size() < MAX_PROPERTIES) {
        device.put(m.group(2), e.getValue());
        claimed.add(e.getKey());
      } else {
        warnings.add(prefix + " device " + index + " has over " + MAX_PROPERTIES + " properties");
      }
    }
    if (taken > 0) {
      // Device 0's properties are repeated without the DEV0_ part.
      properties
          .get(0)
          .forEach(
              (name, value) -> {
                String plain = prefix + "_" + name;
                if (value.equals(env.get(plain))) {
                  claimed.add(plain);
                }
              });
    }
    return new ClassGrant(prefix, numDevices, properties.stream().map(Device::of).toList());
  }

  private static List<InstanceGrant> instances(
      NavigableMap<String, String> env, Set<String> claimed, Warnings warnings) {
    Map<String, Map<String, String>> byHash = new TreeMap<>();
    Set<String> paired = new HashSet<>();
    for (Map.Entry<String, String> e : env.entrySet()) {
      if (claimed.contains(e.getKey())) {
        continue;
      }
      Matcher m = HASHED.matcher(e.getKey());
      if (!m.matches()) {
        continue;
      }
      String base = m.group(1);
      String hash = m.group(2);
      if (!Property.isEnvName(base) || claimed.contains(base) || !env.containsKey(base)) {
        continue;
      }
      Map<String, String> properties = byHash.computeIfAbsent(hash, h -> new TreeMap<>());
      if (properties.size() < MAX_PROPERTIES) {
        properties.put(base, e.getValue());
        if (e.getValue().equals(env.get(base))) {
          paired.add(hash);
        }
      } else {
        warnings.add("Instance " + hash + " has over " + MAX_PROPERTIES + " properties");
      }
    }
    Set<Set<String>> pairedNameSets = new HashSet<>();
    byHash.forEach(
        (hash, properties) -> {
          if (paired.contains(hash)) {
            pairedNameSets.add(properties.keySet());
          }
        });
    Map<String, Map<String, String>> accepted = new LinkedHashMap<>();
    byHash.forEach(
        (hash, properties) -> {
          if (paired.contains(hash) || pairedNameSets.contains(properties.keySet())) {
            accepted.put(hash, properties);
          }
        });
    return accepted.entrySet().stream()
        .map(e -> new InstanceGrant(e.getKey(), Device.of(e.getValue())))
        .toList();
  }

  /** Collects distinct warnings up to {@link #MAX_WARNINGS}. */
  private static final class Warnings {
    private final Set<String> messages = new LinkedHashSet<>();

    void add(String message) {
      if (messages.size() < MAX_WARNINGS) {
        messages.add(message);
      }
    }

    List<String> list() {
      return List.copyOf(messages);
    }
  }
}
