package io.jakri.handler;

import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InterfaceAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Finds the interfaces a handler sends IPv4 multicast through that share an IPv4 address with
 * another interface of the host. The JVM names an IPv4 socket's multicast interface by its address,
 * not its index, and Linux then sends through the newest interface holding that address: group
 * requests meant for one interface leave through the other. Nodes that number isolated machine
 * networks alike have such interfaces; a handler says so, once, rather than find nothing there.
 */
public final class SharedIpv4 {

  private SharedIpv4() {}

  /**
   * One line per IPv4 address of a chosen interface that another interface carries too, in the
   * order of {@code interfaces}.
   *
   * @param chosen the names of the interfaces the handler sends multicast through
   * @param interfaces every up interface of the host, name to its IPv4 addresses (dotted quads)
   */
  public static List<String> among(
      Collection<String> chosen, Map<String, List<String>> interfaces) {
    List<String> lines = new ArrayList<>();
    for (String name : chosen) {
      for (String address : interfaces.getOrDefault(name, List.of())) {
        List<String> others = new ArrayList<>();
        interfaces.forEach(
            (other, addresses) -> {
              if (!other.equals(name) && addresses.contains(address)) {
                others.add(other);
              }
            });
        if (!others.isEmpty()) {
          lines.add(
              "interface "
                  + name
                  + " shares its IPv4 address "
                  + address
                  + " with "
                  + String.join(", ", others)
                  + ": IPv4 multicast sent on "
                  + name
                  + " may leave through "
                  + (others.size() == 1 ? "it" : "one of them")
                  + " instead (the JVM picks an IPv4 multicast interface by its address); give"
                  + " each interface its own address");
        }
      }
    }
    return lines;
  }

  /** {@link #among} for the host's interfaces as the JVM lists them now. */
  public static List<String> on(Collection<NetworkInterface> chosen) throws SocketException {
    Map<String, List<String>> all = new LinkedHashMap<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (nif.isUp()) {
        all.put(nif.getName(), ipv4(nif));
      }
    }
    return among(chosen.stream().map(NetworkInterface::getName).toList(), all);
  }

  /**
   * Says each shared address once: a handler keeps one per probe target and logs what {@link
   * #fresh} returns, so a warning is not repeated every round. Thread-safe.
   */
  public static final class Once {
    private final Set<String> said = ConcurrentHashMap.newKeySet();

    /** The lines of {@link #among} not returned by this instance before. */
    public List<String> fresh(Collection<String> chosen, Map<String, List<String>> interfaces) {
      return among(chosen, interfaces).stream().filter(said::add).toList();
    }

    /** The lines of {@link #on} not returned by this instance before. */
    public List<String> fresh(Collection<NetworkInterface> chosen) throws SocketException {
      return on(chosen).stream().filter(said::add).toList();
    }
  }

  private static List<String> ipv4(NetworkInterface nif) {
    return nif.getInterfaceAddresses().stream()
        .map(InterfaceAddress::getAddress)
        .filter(Objects::nonNull)
        .filter(a -> a instanceof Inet4Address)
        .map(InetAddress::getHostAddress)
        .toList();
  }
}
