package io.jakri.handler.zeroconf;

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
    List<String> skipped = new ArrayList<>();
    if (interfaces.isEmpty()) {
      List<NetworkInterface> all = Collections.list(NetworkInterface.getNetworkInterfaces());
      for (NetworkInterface nif : all) {
        if (nif.isUp() && !nif.isLoopback() && nif.supportsMulticast()) {
          chosen.addAll(preferred(nif));
        }
      }
      return new Selection(new ArrayList<>(chosen), skipped);
    }
    for (String entry : interfaces) {
      if (ZeroconfDetails.isAddressLiteral(entry)) {
        InetAddress address;
        try {
          address = InetAddress.getByName(entry);
        } catch (UnknownHostException e) {
          skipped.add(entry + " is not a valid IP address");
          continue;
        }
        if (NetworkInterface.getByInetAddress(address) == null) {
          skipped.add(entry + " is not an address of this host");
        } else {
          chosen.add(address);
        }
      } else {
        NetworkInterface nif = NetworkInterface.getByName(entry);
        if (nif == null) {
          skipped.add("no network interface named " + entry);
        } else if (!nif.isUp()) {
          skipped.add("network interface " + entry + " is down");
        } else {
          List<InetAddress> addresses = preferred(nif);
          if (addresses.isEmpty()) {
            skipped.add("network interface " + entry + " has no IP address");
          }
          chosen.addAll(addresses);
        }
      }
    }
    return new Selection(new ArrayList<>(chosen), skipped);
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
