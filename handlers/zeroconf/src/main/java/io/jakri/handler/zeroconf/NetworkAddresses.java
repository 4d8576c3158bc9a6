package io.jakri.handler.zeroconf;

import io.jakri.handler.SharedIpv4;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * Picks browse addresses from the host's network interfaces. By default every interface that is up,
 * not loopback and multicast-capable; per interface its IPv4 addresses, or its IPv6 addresses when
 * it has no IPv4 one (JmDNS binds one address per instance). Stateless.
 */
final class NetworkAddresses implements AddressSelector {

  @Override
  public Selection select(List<String> interfaces) throws IOException {
    Set<InetAddress> chosen = new LinkedHashSet<>();
    Set<NetworkInterface> used = new LinkedHashSet<>();
    List<String> problems = new ArrayList<>();
    if (interfaces.isEmpty()) {
      List<NetworkInterface> all = Collections.list(NetworkInterface.getNetworkInterfaces());
      for (NetworkInterface nif : all) {
        if (nif.isUp() && !nif.isLoopback() && nif.supportsMulticast()) {
          List<InetAddress> addresses = preferred(nif);
          chosen.addAll(addresses);
          if (!addresses.isEmpty()) {
            used.add(nif);
          }
        }
      }
      problems.addAll(SharedIpv4.on(used));
      return new Selection(new ArrayList<>(chosen), problems);
    }
    for (String entry : interfaces) {
      if (ZeroconfDetails.isAddressLiteral(entry)) {
        InetAddress address;
        try {
          address = InetAddress.getByName(entry);
        } catch (UnknownHostException e) {
          problems.add(entry + " is not a valid IP address");
          continue;
        }
        NetworkInterface holder = NetworkInterface.getByInetAddress(address);
        if (holder == null) {
          problems.add(entry + " is not an address of this host");
        } else {
          chosen.add(address);
          used.add(holder);
        }
      } else {
        NetworkInterface nif = NetworkInterface.getByName(entry);
        if (nif == null) {
          problems.add("no network interface named " + entry);
        } else if (!nif.isUp()) {
          problems.add("network interface " + entry + " is down");
        } else {
          List<InetAddress> addresses = preferred(nif);
          if (addresses.isEmpty()) {
            problems.add("network interface " + entry + " has no IP address");
          } else {
            used.add(nif);
          }
          chosen.addAll(addresses);
        }
      }
    }
    problems.addAll(SharedIpv4.on(used));
    return new Selection(new ArrayList<>(chosen), problems);
  }

  private static List<InetAddress> preferred(NetworkInterface nif) throws SocketException {
    List<InetAddress> v4 = new ArrayList<>();
    List<InetAddress> v6 = new ArrayList<>();
    for (InetAddress a : Collections.list(nif.getInetAddresses())) {
      if (a.isLoopbackAddress() && !nif.isLoopback()) {
        continue;
      }
      (a instanceof Inet4Address ? v4 : v6).add(a);
    }
    return v4.isEmpty() ? v6 : v4;
  }
}
