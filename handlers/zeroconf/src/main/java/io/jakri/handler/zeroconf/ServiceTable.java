package io.jakri.handler.zeroconf;

import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;

/**
 * The services one Configuration currently sees, per source (the local address a browse runs on),
 * and the device snapshot they make.
 *
 * <p>Updates are idempotent: putting the same record twice reports {@link Change#UNCHANGED}. JmDNS
 * resolves a service several times and may deliver it before its TXT record arrives, with empty TXT
 * data (it cannot tell "no TXT yet" from "empty TXT"); so a record with no TXT attributes keeps the
 * attributes seen before for that service on that source. At most {@code capacity} distinct
 * services are tracked; further ones are refused with {@link Change#FULL}.
 *
 * <p>Not thread-safe: the owner serialises all calls.
 */
final class ServiceTable {

  /** What a {@link #put} did. */
  enum Change {
    CHANGED,
    UNCHANGED,
    FULL
  }

  private final int capacity;
  // lower-cased instance name -> source -> record; names compare case-insensitively in DNS
  private final Map<String, Map<String, ServiceRecord>> services = new TreeMap<>();

  ServiceTable(int capacity) {
    if (capacity < 1) {
      throw new IllegalArgumentException("capacity must be positive");
    }
    this.capacity = capacity;
  }

  Change put(String source, ServiceRecord record) {
    String key = record.name().toLowerCase(Locale.ROOT);
    Map<String, ServiceRecord> bySource = services.get(key);
    if (bySource == null) {
      if (services.size() >= capacity) {
        return Change.FULL;
      }
      bySource = new TreeMap<>();
      services.put(key, bySource);
    }
    ServiceRecord old = bySource.get(source);
    ServiceRecord merged = record;
    if (old != null && record.txt().isEmpty() && !old.txt().isEmpty()) {
      merged =
          new ServiceRecord(
              record.name(),
              record.type(),
              record.domain(),
              record.host(),
              record.addresses(),
              record.port(),
              old.txt());
    }
    if (merged.equals(old)) {
      return Change.UNCHANGED;
    }
    bySource.put(source, merged);
    return Change.CHANGED;
  }

  /** Forgets a service on one source; true when something was removed. */
  boolean remove(String source, String name) {
    String key = name.toLowerCase(Locale.ROOT);
    Map<String, ServiceRecord> bySource = services.get(key);
    if (bySource == null || bySource.remove(source) == null) {
      return false;
    }
    if (bySource.isEmpty()) {
      services.remove(key);
    }
    return true;
  }

  int size() {
    return services.size();
  }

  /**
   * One record per service, merged over sources: the record from the first source (in source
   * order), with the addresses of all sources (IPv4 first) and the first non-empty TXT attributes.
   */
  List<ServiceRecord> merged() {
    List<ServiceRecord> result = new ArrayList<>(services.size());
    for (Map<String, ServiceRecord> bySource : services.values()) {
      ServiceRecord first = bySource.values().iterator().next();
      Set<String> v4 = new LinkedHashSet<>();
      Set<String> v6 = new LinkedHashSet<>();
      List<TxtEntry> txt = List.of();
      Optional<String> host = Optional.empty();
      for (ServiceRecord r : bySource.values()) {
        for (String a : r.addresses()) {
          (a.contains(":") ? v6 : v4).add(a);
        }
        if (txt.isEmpty()) {
          txt = r.txt();
        }
        if (host.isEmpty()) {
          host = r.host();
        }
      }
      List<String> addresses = new ArrayList<>(v4);
      addresses.addAll(v6);
      result.add(
          new ServiceRecord(
              first.name(), first.type(), first.domain(), host, addresses, first.port(), txt));
    }
    return result;
  }

  /**
   * The devices the filter accepts, sorted by id: one shared device per service, id {@link
   * ServiceRecord#fullName()}, properties from {@link ZeroconfProperties#of}.
   */
  List<DiscoveredDevice> snapshot(ServiceFilter filter) {
    List<DiscoveredDevice> devices = new ArrayList<>();
    for (ServiceRecord service : merged()) {
      if (filter.matches(service)) {
        devices.add(DiscoveredDevice.of(service.fullName(), ZeroconfProperties.of(service), true));
      }
    }
    devices.sort((a, b) -> a.id().compareTo(b.id()));
    return devices;
  }
}
