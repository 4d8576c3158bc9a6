package io.jakri.handler.coap;

import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.util.Objects;

/**
 * A CoAP endpoint: an IP address and a UDP port. Its {@link #id()} is the device id.
 *
 * @param address the address (IPv6 with its scope when link-local)
 * @param port the UDP port
 */
public record Endpoint(InetAddress address, int port) {

  public Endpoint {
    Objects.requireNonNull(address, "address");
    if (port < 1 || port > 65535) {
      throw new IllegalArgumentException("port " + port);
    }
  }

  /**
   * The endpoint a datagram came from. A link-local IPv6 source carries its scope as a number; it
   * is named by its interface ({@code %eth0}) when that still exists, for a readable id.
   */
  static Endpoint of(InetSocketAddress socket) {
    InetAddress address = socket.getAddress();
    if (address instanceof Inet6Address v6
        && v6.getScopedInterface() == null
        && v6.getScopeId() != 0) {
      try {
        java.net.NetworkInterface nif = java.net.NetworkInterface.getByIndex(v6.getScopeId());
        if (nif != null) {
          address = Inet6Address.getByAddress(null, v6.getAddress(), nif);
        }
      } catch (java.io.IOException e) {
        // keep the numeric scope
      }
    }
    return new Endpoint(address, socket.getPort());
  }

  InetSocketAddress socketAddress() {
    return new InetSocketAddress(address, port);
  }

  /** {@code 10.0.0.5} or {@code [fe80::1%eth0]}: the host part of a URI. */
  public String host() {
    String text = address.getHostAddress();
    if (address instanceof Inet6Address) {
      // RFC 6874 writes the zone as %25; an env value is not a URI parser, keep it readable.
      return "[" + text + "]";
    }
    return text;
  }

  /** {@code host:port}, the device id. */
  public String id() {
    return host() + ":" + port;
  }

  /** {@code coap://host:port}. */
  public String uri() {
    String host = host().replace("%", "%25");
    return "coap://" + host + ":" + port;
  }
}
