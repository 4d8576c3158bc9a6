package io.jakri.handler.mqtt;

import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * The announcements seen, by topic, at most {@code maxDevices} of them; not thread-safe (the
 * discovery guards it). A snapshot keeps the devices the filters accept, one per id (the first
 * topic in order wins when two announce the same unique_id).
 */
final class DeviceTable {

  /** What applying an announcement did. */
  enum Change {
    CHANGED,
    UNCHANGED,
    FULL
  }

  private final int maxDevices;
  private final Set<String> components;
  private final Set<String> manufacturers;
  private final Set<String> models;
  private final TreeMap<String, Announcement.Present> byTopic = new TreeMap<>();

  DeviceTable(MqttDetails details) {
    this.maxDevices = details.maxDevices();
    this.components = details.components();
    this.manufacturers = details.manufacturers();
    this.models = details.models();
  }

  Change put(Announcement.Present device) {
    Announcement.Present old = byTopic.get(device.topic());
    if (old == null && byTopic.size() >= maxDevices) {
      return Change.FULL;
    }
    byTopic.put(device.topic(), device);
    return device.equals(old) ? Change.UNCHANGED : Change.CHANGED;
  }

  boolean remove(String topic) {
    return byTopic.remove(topic) != null;
  }

  /** Drops every topic not in {@code keep}; whether anything went. */
  boolean retainTopics(Set<String> keep) {
    return byTopic.keySet().retainAll(keep);
  }

  boolean clear() {
    boolean had = !byTopic.isEmpty();
    byTopic.clear();
    return had;
  }

  int size() {
    return byTopic.size();
  }

  List<DiscoveredDevice> snapshot() {
    List<DiscoveredDevice> devices = new ArrayList<>();
    Set<String> ids = new HashSet<>();
    for (Announcement.Present a : byTopic.values()) {
      if (accepts(a) && ids.add(a.id())) {
        devices.add(DiscoveredDevice.of(a.id(), a.properties(), true));
      }
    }
    return List.copyOf(devices);
  }

  private boolean accepts(Announcement.Present a) {
    Map<String, String> p = a.properties();
    return (components.isEmpty() || components.contains(a.component()))
        && (manufacturers.isEmpty() || manufacturers.contains(p.get(Properties.MANUFACTURER)))
        && (models.isEmpty() || models.contains(p.get(Properties.MODEL)));
  }
}
