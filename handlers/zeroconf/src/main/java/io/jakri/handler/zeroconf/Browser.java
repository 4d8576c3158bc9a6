package io.jakri.handler.zeroconf;

import java.io.IOException;
import java.net.InetAddress;

/** A running mDNS browse for one service type on one local address. */
interface Browser {

  /** Stops browsing and releases the socket. May block for seconds (JmDNS sends goodbyes). */
  void close();

  /** What a browse reports; called on the browser's own threads, possibly concurrently. */
  interface Events {
    /** A service was resolved (again): its current SRV, address and TXT data. */
    void resolved(ServiceRecord service);

    /** The service with this instance name went away. */
    void removed(String instanceName);
  }

  /** Opens browses. Opening may block for about a second (socket, probing). */
  interface Factory {
    Browser open(InetAddress address, ServiceType type, String domain, Events events)
        throws IOException;
  }
}
