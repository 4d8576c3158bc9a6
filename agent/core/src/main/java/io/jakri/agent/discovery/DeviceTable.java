package io.jakri.agent.discovery;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.ContainerPaths;
import io.jakri.agent.model.EnvContract;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.logging.LogText;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.function.Supplier;

/**
 * The devices one Configuration has on this node, and the rules that admit them: takes a handler's
 * full snapshot and returns what changed as {@link DeviceChange} values. A device missing from a
 * snapshot turns offline at once ({@link DeviceChange.Vanished}, with the end of its offline grace)
 * and is {@link DeviceChange.Removed} by {@link #expire} once that grace ended, unless a snapshot
 * reports it again first ({@link DeviceChange.Returned}).
 *
 * <p>A snapshot's devices are admitted in order: devices without an id, with an id already in the
 * snapshot or an Instance name another device of the snapshot has (the name's hash is 3 bytes), or
 * beyond {@link #MAX_DEVICES} are ignored; devices in a class the Configuration may not use ({@link
 * ClassPolicy}) are refused; new devices are left out while {@link #MAX_DEVICES} are tracked (seen
 * or in their grace), and while their slots would exceed the {@link SlotLimits} or what one
 * ListAndWatch message can carry. Devices already tracked always stay. Each admitted device keeps
 * only the mounts and device nodes that meet {@link ContainerPaths} (the refused ones are reported
 * once per device), so what reaches a container was checked here.
 *
 * <p>Pure and single-threaded: no threads, no timers, no I/O; time comes in as a parameter (any
 * timeline that never goes back). Not thread-safe.
 */
public final class DeviceTable {

  /** Most devices taken from one snapshot, and most tracked per Configuration. */
  public static final int MAX_DEVICES = 10_000;

  /**
   * What every table on this node applies.
   *
   * @param node this node's name (part of the Instance name of an unshared device)
   * @param offlineGrace how long a vanished device stays before it is removed
   * @param classPolicy which class resources a Configuration's devices may join
   * @param slotLimits the most slots per Configuration and in all
   * @param allowReservedBrokerEnv whether brokerProperties may set reserved env names
   * @param containerPaths the rules a device's mounts and device nodes must meet to reach a
   *     container
   */
  public record Rules(
      String node,
      Duration offlineGrace,
      ClassPolicy classPolicy,
      SlotLimits slotLimits,
      boolean allowReservedBrokerEnv,
      ContainerPaths containerPaths) {

    /** With the default {@link ContainerPaths} (no operator exceptions). */
    public Rules(
        String node,
        Duration offlineGrace,
        ClassPolicy classPolicy,
        SlotLimits slotLimits,
        boolean allowReservedBrokerEnv) {
      this(
          node,
          offlineGrace,
          classPolicy,
          slotLimits,
          allowReservedBrokerEnv,
          ContainerPaths.DEFAULT);
    }

    /** Why a Configuration's brokerProperties are refused on this agent, if they are. */
    public Optional<String> reservedEnvRefusal(ConfigurationSpec spec) {
      if (allowReservedBrokerEnv) {
        return Optional.empty();
      }
      List<String> reserved =
          spec.brokerProperties().keySet().stream()
              .filter(n -> EnvContract.validName(n) && EnvContract.reserved(n))
              .sorted()
              .toList();
      if (reserved.isEmpty()) {
        return Optional.empty();
      }
      return Optional.of(
          "spec.brokerProperties: reserved env "
              + (reserved.size() == 1 ? "name " : "names ")
              + LogText.quote(String.join(", ", reserved.subList(0, Math.min(10, reserved.size()))))
              + " would change how programs in every container given the device run; refused"
              + " (the operator may allow it with --allow-reserved-broker-env)");
    }
  }

  /**
   * What a table needs to know of the other Configurations on this node.
   *
   * @param otherSlots the slots (capacity × devices) they hold
   * @param classOwners which of them serves each class resource (asked only when a device is in a
   *     class other than its Configuration's own)
   */
  public record Neighbours(long otherSlots, Supplier<Map<String, String>> classOwners) {

    /** No other Configuration. */
    public static final Neighbours NONE = new Neighbours(0, Map::of);
  }

  /**
   * What one snapshot did.
   *
   * @param changes the devices that appeared, changed or returned (in snapshot order), then those
   *     that vanished
   * @param classRefusal devices refused for their class, as one message
   * @param slotRefusal devices refused by the slot limits, as one message
   * @param warnings other problems with the snapshot, one message each (ignored devices, dropped
   *     properties, devices left out while the table is full, refused mounts and device nodes)
   * @param refusedEntries mounts and device nodes newly refused ({@link ContainerPaths}), by kind:
   *     counted once per device until its refused entries change or it leaves
   */
  public record Outcome(
      List<DeviceChange> changes,
      Optional<String> classRefusal,
      Optional<String> slotRefusal,
      List<String> warnings,
      Map<ContainerPaths.Kind, Integer> refusedEntries) {

    public Outcome {
      refusedEntries = Map.copyOf(refusedEntries);
    }

    /** Both refusals as one message, if any device was refused. */
    public Optional<String> refusal() {
      if (classRefusal.isEmpty()) {
        return slotRefusal;
      }
      return Optional.of(
          slotRefusal.map(s -> classRefusal.get() + "; " + s).orElse(classRefusal.get()));
    }
  }

  private final Rules rules;
  private ConfigurationSpec spec;
  private final Map<String, LocalDevice> devices = new LinkedHashMap<>();
  // When each offline device's grace ends, in that order (time never goes back).
  private final LinkedHashMap<String, Instant> graceEnds = new LinkedHashMap<>();
  private final DeviceProperties properties = new DeviceProperties();
  private final RefusedEntries refusedEntries = new RefusedEntries();

  public DeviceTable(Rules rules, ConfigurationSpec spec) {
    this.rules = rules;
    this.spec = spec;
  }

  public ConfigurationSpec spec() {
    return spec;
  }

  /** Devices tracked: seen, or vanished and within their offline grace. */
  public int size() {
    return devices.size();
  }

  public Optional<LocalDevice> get(String instanceName) {
    return Optional.ofNullable(devices.get(instanceName));
  }

  public boolean contains(String instanceName) {
    return devices.containsKey(instanceName);
  }

  /** The slots the tracked devices take: capacity × devices. */
  public long slots() {
    return Math.max(1, (long) spec.capacity()) * devices.size();
  }

  /** The class resources of the tracked devices, in the order they were first seen. */
  public Set<String> classes() {
    Set<String> classes = new LinkedHashSet<>();
    for (LocalDevice d : devices.values()) {
      classes.add(d.classResource());
    }
    return classes;
  }

  /**
   * Whether the tracked devices can take {@code next} (a new spec of the same Configuration) in
   * place: not when its brokerProperties are refused, nor when a larger capacity may no longer fit
   * the slot limits for all of them (then discovery starts afresh, so the devices are admitted
   * again within the limits, none kept half-applied).
   */
  public boolean admitsInPlace(ConfigurationSpec next) {
    SlotLimits limits = rules.slotLimits();
    return rules.reservedEnvRefusal(next).isEmpty()
        && !(next.capacity() > spec.capacity()
            && (long) next.capacity() * devices.size()
                > Math.min(limits.perConfiguration(), limits.perAgent()));
  }

  /**
   * Takes {@code next} as the Configuration's spec: every tracked device takes its capacity and
   * brokerProperties at once ({@link DeviceChange.Rewritten}).
   */
  public List<DeviceChange> respecify(ConfigurationSpec next) {
    spec = next;
    List<DeviceChange> changes = new ArrayList<>();
    for (Map.Entry<String, LocalDevice> e : devices.entrySet()) {
      LocalDevice updated =
          new LocalDevice(e.getKey(), next, e.getValue().device(), e.getValue().online());
      e.setValue(updated);
      changes.add(new DeviceChange.Rewritten(updated));
    }
    return changes;
  }

  /** Drops every device ({@link DeviceChange.Withdrawn}). */
  public List<DeviceChange> clear() {
    List<DeviceChange> changes = new ArrayList<>();
    for (LocalDevice d : devices.values()) {
      changes.add(new DeviceChange.Withdrawn(d));
    }
    devices.clear();
    graceEnds.clear();
    refusedEntries.clear();
    return changes;
  }

  /**
   * Forgets one device without a change (its Instance could not be written: the next snapshot that
   * reports it makes it appear again).
   */
  public void forget(String instanceName) {
    devices.remove(instanceName);
    graceEnds.remove(instanceName);
    refusedEntries.forget(instanceName);
  }

  /** Every online device vanishes (its handler went away). */
  public List<DeviceChange> vanishAll(Instant now) {
    List<DeviceChange> changes = new ArrayList<>();
    markMissing(Set.of(), now, changes);
    return changes;
  }

  /** When the next offline grace ends, if a device is in its grace. */
  public Optional<Instant> nextExpiry() {
    Iterator<Instant> it = graceEnds.values().iterator();
    return it.hasNext() ? Optional.of(it.next()) : Optional.empty();
  }

  /** Removes the offline devices whose grace ended by {@code now}. */
  public List<DeviceChange> expire(Instant now) {
    List<DeviceChange> changes = new ArrayList<>();
    for (Iterator<Map.Entry<String, Instant>> it = graceEnds.entrySet().iterator();
        it.hasNext(); ) {
      Map.Entry<String, Instant> e = it.next();
      if (e.getValue().isAfter(now)) {
        break;
      }
      it.remove();
      LocalDevice device = devices.get(e.getKey());
      if (device != null && !device.online()) {
        devices.remove(e.getKey());
        refusedEntries.forget(e.getKey());
        changes.add(new DeviceChange.Removed(device));
      }
    }
    return changes;
  }

  /**
   * Applies one full snapshot taken at {@code now}.
   *
   * @param neighbours the other Configurations on this node, for the class and slot rules
   */
  public Outcome apply(List<DiscoveredDevice> snapshot, Instant now, Neighbours neighbours) {
    Map<String, DiscoveredDevice> seen = new LinkedHashMap<>();
    int blank = 0;
    int duplicates = 0;
    int collisions = 0;
    int over = 0;
    for (DiscoveredDevice device : snapshot) {
      if (device == null || device.id() == null || device.id().isBlank()) {
        blank++;
        continue;
      }
      if (seen.size() >= MAX_DEVICES) {
        over++;
        continue;
      }
      String name =
          InstanceNames.instanceName(spec.name(), device.id(), device.shared(), rules.node());
      DiscoveredDevice first = seen.putIfAbsent(name, DeviceProperties.bounded(device));
      if (first != null) {
        // The name's hash is 3 bytes (Akri's): among thousands of ids, distinct ones can share it.
        if (first.id().equals(device.id())) {
          duplicates++;
        } else {
          collisions++;
        }
      }
    }
    List<String> warnings = new ArrayList<>();
    Optional<String> classRefusal = refuseClasses(seen, neighbours);
    properties.dropped(seen.values(), warnings);
    limitNewcomers(seen, warnings);
    Optional<String> slotRefusal = limitSlots(seen, neighbours.otherSlots());
    ignored(blank, duplicates, collisions, over).ifPresent(warnings::add);
    // The one place a handler's mounts and device nodes become the device's: Allocate and the CDI
    // spec only ever see the entries that pass.
    Map<ContainerPaths.Kind, Integer> refused =
        refusedEntries.check(rules.containerPaths(), seen, warnings);
    List<DeviceChange> changes = new ArrayList<>();
    for (Map.Entry<String, DiscoveredDevice> e : seen.entrySet()) {
      LocalDevice current = devices.get(e.getKey());
      LocalDevice next = new LocalDevice(e.getKey(), spec, e.getValue(), true);
      if (current == null || !current.equals(next)) {
        changes.add(
            current == null
                ? new DeviceChange.Appeared(next)
                : current.online()
                    ? new DeviceChange.Updated(next)
                    : new DeviceChange.Returned(next));
        graceEnds.remove(e.getKey());
        devices.put(e.getKey(), next);
      }
    }
    markMissing(seen.keySet(), now, changes);
    return new Outcome(changes, classRefusal, slotRefusal, warnings, refused);
  }

  /** What a snapshot's ignored devices were, if any; each count named by its cause. */
  private static Optional<String> ignored(int blank, int duplicates, int collisions, int over) {
    List<String> causes = new ArrayList<>();
    if (blank > 0) {
      causes.add(blank + " without an id");
    }
    if (duplicates > 0) {
      causes.add(duplicates + " reported twice");
    }
    if (collisions > 0) {
      causes.add(
          collisions
              + " whose Instance name (a 3-byte hash of the id) is another reported device's");
    }
    if (over > 0) {
      causes.add(over + " over the limit of " + MAX_DEVICES + " devices per snapshot");
    }
    int total = blank + duplicates + collisions + over;
    return total == 0
        ? Optional.empty()
        : Optional.of(
            "ignored "
                + total
                + (total == 1 ? " reported device: " : " reported devices: ")
                + String.join(", ", causes));
  }

  /** Devices not in {@code seen} turn offline now and leave after the offline grace. */
  private void markMissing(Set<String> seen, Instant now, List<DeviceChange> changes) {
    Instant ends = now.plus(rules.offlineGrace());
    for (Map.Entry<String, LocalDevice> e : devices.entrySet()) {
      LocalDevice device = e.getValue();
      if (!seen.contains(e.getKey()) && device.online()) {
        LocalDevice offline = device.withOnline(false);
        e.setValue(offline);
        graceEnds.remove(e.getKey());
        graceEnds.put(e.getKey(), ends);
        changes.add(new DeviceChange.Vanished(offline, ends));
      }
    }
  }

  /**
   * Leaves out of {@code seen} the devices whose class the Configuration may not use ({@link
   * ClassPolicy}); returns the refusals as one message.
   */
  private Optional<String> refuseClasses(Map<String, DiscoveredDevice> seen, Neighbours others) {
    String own = spec.defaultClass();
    Map<String, Optional<String>> verdicts = new HashMap<>();
    Map<String, String> owners = null;
    int refusedDevices = 0;
    for (Iterator<DiscoveredDevice> it = seen.values().iterator(); it.hasNext(); ) {
      String cls = it.next().deviceClass().orElse(own);
      if (cls.equals(own)) {
        continue;
      }
      if (owners == null) {
        owners = new HashMap<>(others.classOwners().get());
        for (String c : classes()) {
          owners.put(c, spec.name());
        }
      }
      Map<String, String> known = owners;
      Optional<String> verdict =
          verdicts.computeIfAbsent(
              cls,
              c ->
                  rules
                      .classPolicy()
                      .refusal(spec.name(), c, known, spec.name().equals(known.get(c))));
      if (verdict.isPresent()) {
        it.remove();
        refusedDevices++;
      }
    }
    if (refusedDevices == 0) {
      return Optional.empty();
    }
    List<String> reasons =
        verdicts.values().stream().flatMap(Optional::stream).sorted().limit(5).toList();
    return Optional.of(
        refusedDevices
            + (refusedDevices == 1 ? " device" : " devices")
            + " refused: "
            + String.join("; ", reasons));
  }

  /**
   * Keeps the devices tracked (seen now, or vanished and in their offline grace) at most {@link
   * #MAX_DEVICES}: newcomers that do not fit are left out of {@code seen} until vanished devices
   * leave at the end of their grace and make room. A handler that reports ever-new ids (a flood)
   * thus gets at most {@link #MAX_DEVICES} Instances per offline grace and cannot make the agent
   * create and retire device-plugin servers in a loop.
   */
  private void limitNewcomers(Map<String, DiscoveredDevice> seen, List<String> warnings) {
    long room = MAX_DEVICES - (long) devices.size();
    int left = 0;
    for (Iterator<String> it = seen.keySet().iterator(); it.hasNext(); ) {
      String name = it.next();
      if (devices.containsKey(name)) {
        continue;
      }
      if (room > 0) {
        room--;
      } else {
        it.remove();
        left++;
      }
    }
    if (left > 0) {
      warnings.add(
          devices.size()
              + " devices tracked already (seen or within their offline grace); "
              + left
              + " new devices left out until vanished ones leave");
    }
  }

  /**
   * Leaves out of {@code seen} the new devices whose slots (capacity each) would take the
   * Configuration or the agent beyond {@link SlotLimits}, or beyond what the class resource's
   * ListAndWatch message can carry; devices already tracked stay. Returns the refusal, if any
   * device was left out.
   */
  private Optional<String> limitSlots(Map<String, DiscoveredDevice> seen, long others) {
    SlotLimits slotLimits = rules.slotLimits();
    long capacity = Math.max(1, spec.capacity());
    long byConfiguration = slotLimits.perConfiguration() / capacity - devices.size();
    long byAgent = (slotLimits.perAgent() - others) / capacity - devices.size();
    // The class resource lists every slot of the Configuration in one ListAndWatch message,
    // which the kubelet refuses beyond its message limit (and would never advertise).
    long byMessage =
        ConfigurationParser.devicesPerListAndWatch(spec.name(), (int) capacity) - devices.size();
    long room = Math.min(Math.min(byConfiguration, byAgent), byMessage);
    int left = 0;
    for (Iterator<String> it = seen.keySet().iterator(); it.hasNext(); ) {
      if (devices.containsKey(it.next())) {
        continue;
      }
      if (room > 0) {
        room--;
      } else {
        it.remove();
        left++;
      }
    }
    if (left == 0) {
      return Optional.empty();
    }
    String refused = left + (left == 1 ? " device" : " devices") + " of capacity " + capacity;
    if (byMessage < Math.min(byConfiguration, byAgent)) {
      return Optional.of(
          refused
              + " refused: the class resource's ListAndWatch message would be larger than the"
              + " kubelet accepts ("
              + ConfigurationParser.KUBELET_MAX_MESSAGE
              + " bytes; "
              + ConfigurationParser.devicesPerListAndWatch(spec.name(), (int) capacity)
              + " devices at most)");
    }
    boolean configurationBound = byConfiguration <= byAgent;
    return Optional.of(
        refused
            + " refused: "
            + (configurationBound
                ? "more than "
                    + slotLimits.perConfiguration()
                    + " slots for this Configuration"
                    + " (--max-slots-per-configuration)"
                : "more than "
                    + slotLimits.perAgent()
                    + " slots on this agent, "
                    + others
                    + " of them other Configurations' (--max-slots-per-agent)"));
  }
}
