package io.jakri.handler.zeroconf;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import javax.jmdns.JmDNS;
import javax.jmdns.ServiceEvent;
import javax.jmdns.ServiceListener;

/**
 * A bare JmDNS listener on one address, to compare a discovery's latency with: it records when each
 * service instance was first resolved, nothing else.
 *
 * <p>Public (and shipped in this module's test-jar) for the agent-level ITs in {@code it/}.
 * Threading: JmDNS calls back on its own threads; {@link #resolvedAt} may be read from any thread.
 */
public final class BareJmdns implements AutoCloseable {

  private final JmDNS jmdns;
  private final Map<String, Long> resolvedAt = new ConcurrentHashMap<>();

  /**
   * Starts browsing {@code type} (e.g. {@code _http._tcp}) in {@code .local} on {@code address}.
   */
  public BareJmdns(String address, String type) throws IOException {
    jmdns = JmDNS.create(InetAddress.getByName(address), "jakri-bare-it");
    jmdns.addServiceListener(
        type + ".local.",
        new ServiceListener() {
          @Override
          public void serviceAdded(ServiceEvent event) {}

          @Override
          public void serviceRemoved(ServiceEvent event) {}

          @Override
          public void serviceResolved(ServiceEvent event) {
            resolvedAt.putIfAbsent(event.getName(), System.nanoTime());
          }
        });
  }

  /** {@link System#nanoTime()} of the first resolve of service instance {@code name}, if any. */
  public Optional<Long> resolvedAt(String name) {
    return Optional.ofNullable(resolvedAt.get(name));
  }

  /** Closes JmDNS (takes about 2 s: it sends goodbyes). */
  @Override
  public void close() throws IOException {
    jmdns.close();
  }
}
