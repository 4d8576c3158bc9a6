package io.jakri.agent.instance;

import io.jakri.crd.InstanceNames;
import io.jakri.crd.SlotUsage;
import java.util.AbstractMap;
import java.util.Collections;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeSet;

/**
 * The shared state of one Instance (the fields of the {@code instances.akri.sh} resource that the
 * agents coordinate through). Immutable; {@code version} is the store's optimistic-concurrency
 * token (the resourceVersion in cluster mode), 0 for a not-yet-stored Instance.
 *
 * @param deviceUsage slot id to usage, one entry per slot {@code <name>-0 .. <name>-(capacity-1)},
 *     iterated in slot order
 * @param brokerProperties the device's properties merged with the Configuration's brokerProperties
 *     (the latter win), as Akri stores them
 */
public record Instance(
    String name,
    String configurationName,
    int capacity,
    boolean shared,
    SortedSet<String> nodes,
    Map<String, SlotUsage> deviceUsage,
    Map<String, String> brokerProperties,
    long version) {

  /** Orders slot ids by their numeric suffix ({@code x-2} before {@code x-10}). */
  public static final Comparator<String> SLOT_ORDER =
      Comparator.comparingInt(InstanceNames::slotIndex).thenComparing(Comparator.naturalOrder());

  public Instance {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(configurationName, "configurationName");
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be at least 1: " + capacity);
    }
    nodes = Collections.unmodifiableSortedSet(new TreeSet<>(nodes));
    if (!(deviceUsage instanceof Slots s && s.fits(name, capacity))) {
      deviceUsage = Slots.of(name, capacity, deviceUsage);
    }
    brokerProperties = Collections.unmodifiableMap(new LinkedHashMap<>(brokerProperties));
  }

  /**
   * The immutable slot map of an Instance: exactly the slots {@code <name>-0 ..
   * <name>-(capacity-1)} in that order. Copies of an Instance that keep its name and capacity share
   * it instead of rebuilding and re-sorting it.
   */
  private static final class Slots extends AbstractMap<String, SlotUsage> {
    private final String name;
    private final int capacity;
    private final Map<String, SlotUsage> usage;

    private Slots(String name, int capacity, Map<String, SlotUsage> usage) {
      this.name = name;
      this.capacity = capacity;
      this.usage = usage;
    }

    static Slots of(String name, int capacity, Map<String, SlotUsage> given) {
      Map<String, SlotUsage> usage = new LinkedHashMap<>(capacity * 2);
      for (int n = 0; n < capacity; n++) {
        String slot = InstanceNames.slotId(name, n);
        SlotUsage u = given.get(slot);
        usage.put(slot, u == null ? SlotUsage.Free.INSTANCE : u);
      }
      return new Slots(name, capacity, Collections.unmodifiableMap(usage));
    }

    boolean fits(String otherName, int otherCapacity) {
      return capacity == otherCapacity && name.equals(otherName);
    }

    @Override
    public Set<Map.Entry<String, SlotUsage>> entrySet() {
      return usage.entrySet();
    }

    @Override
    public SlotUsage get(Object key) {
      return usage.get(key);
    }

    @Override
    public boolean containsKey(Object key) {
      return usage.containsKey(key);
    }

    @Override
    public int size() {
      return capacity;
    }
  }

  /** Whether this and {@code other} have the same content apart from {@link #version()}. */
  public boolean sameContent(Instance other) {
    return capacity == other.capacity
        && shared == other.shared
        && name.equals(other.name)
        && configurationName.equals(other.configurationName)
        && nodes.equals(other.nodes)
        && (deviceUsage == other.deviceUsage || deviceUsage.equals(other.deviceUsage))
        && brokerProperties.equals(other.brokerProperties);
  }

  /** A new Instance seen first on {@code node}, all slots free. */
  public static Instance create(
      String name,
      String configurationName,
      int capacity,
      boolean shared,
      String node,
      Map<String, String> brokerProperties) {
    return new Instance(
        name,
        configurationName,
        capacity,
        shared,
        new TreeSet<>(List.of(node)),
        Map.of(),
        brokerProperties,
        0);
  }

  /** The hash part of the name (the text after the last {@code -}). */
  public String hash() {
    return name.substring(name.lastIndexOf('-') + 1);
  }

  public Instance withNodes(SortedSet<String> newNodes) {
    return new Instance(
        name,
        configurationName,
        capacity,
        shared,
        newNodes,
        deviceUsage,
        brokerProperties,
        version);
  }

  public Instance withUsage(Map<String, SlotUsage> usage) {
    return new Instance(
        name, configurationName, capacity, shared, nodes, usage, brokerProperties, version);
  }

  public Instance withSpec(int newCapacity, Map<String, String> newBrokerProperties) {
    return new Instance(
        name,
        configurationName,
        newCapacity,
        shared,
        nodes,
        deviceUsage,
        newBrokerProperties,
        version);
  }

  public Instance withVersion(long newVersion) {
    return new Instance(
        name,
        configurationName,
        capacity,
        shared,
        nodes,
        deviceUsage,
        brokerProperties,
        newVersion);
  }
}
