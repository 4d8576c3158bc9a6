package io.jakri.handler.zeroconf;

import java.util.List;
import java.util.Objects;
import java.util.Optional;

/**
 * One resolved DNS-SD service instance as seen on one interface, independent of JmDNS.
 *
 * @param name the instance name, e.g. {@code Living Room Printer}
 * @param type the service type it was browsed as
 * @param domain the domain without trailing dot, e.g. {@code local}
 * @param host the target host from the SRV record without trailing dot, e.g. {@code box.local}
 * @param addresses the host's addresses as literals, IPv4 first
 * @param port the port from the SRV record
 * @param txt the TXT attributes in wire order (empty while JmDNS has not seen the TXT record)
 */
public record ServiceRecord(
    String name,
    ServiceType type,
    String domain,
    Optional<String> host,
    List<String> addresses,
    int port,
    List<TxtEntry> txt) {

  public ServiceRecord {
    Objects.requireNonNull(name, "name");
    Objects.requireNonNull(type, "type");
    Objects.requireNonNull(domain, "domain");
    host = host == null ? Optional.empty() : host;
    addresses = List.copyOf(addresses == null ? List.of() : addresses);
    txt = List.copyOf(txt == null ? List.of() : txt);
  }

  /**
   * The DNS-SD service instance name {@code <name>.<kind>.<domain>}, e.g. {@code
   * printer._ipp._tcp.local}. Unique within a domain (DNS-SD responders rename on conflict), so it
   * is the device id.
   */
  public String fullName() {
    return name + "." + type.kind() + "." + domain;
  }
}
