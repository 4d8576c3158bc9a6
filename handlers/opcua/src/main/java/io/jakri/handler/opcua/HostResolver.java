package io.jakri.handler.opcua;

import java.net.InetAddress;
import java.net.UnknownHostException;

/** Whether a host name resolves to an address, as Akri checks before using a server's URL. */
@FunctionalInterface
public interface HostResolver {

  /** Whether {@code host} (a name or an address literal) resolves. May block on DNS. */
  boolean resolves(String host);

  /**
   * The system resolver (the JVM's cache in front of it: {@code networkaddress.cache.ttl} and
   * {@code networkaddress.cache.negative.ttl}).
   */
  static HostResolver system() {
    return host -> {
      try {
        InetAddress.getAllByName(host);
        return true;
      } catch (UnknownHostException | SecurityException e) {
        return false;
      }
    };
  }
}
