package io.jakri.handler.zeroconf;

import java.io.IOException;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import javax.jmdns.JmDNS;
import javax.jmdns.ServiceEvent;
import javax.jmdns.ServiceInfo;
import javax.jmdns.ServiceListener;
import javax.jmdns.impl.JmDNSImpl;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A {@link Browser} backed by one JmDNS instance bound to one address. JmDNS calls the listener on
 * its own threads; resolution requests for newly added services run on the given executor because
 * {@code requestServiceInfo} waits up to 200 ms for an answer. {@link #close()} returns once JmDNS
 * is closed and its timers have ended ({@link JmdnsTimers}), or after {@link #TIMERS_END} more.
 */
final class JmdnsBrowser implements Browser {

  private static final Logger LOG = LoggerFactory.getLogger(JmdnsBrowser.class);

  /** How long {@link #close()} waits for JmDNS's timers to end after JmDNS closed. */
  static final Duration TIMERS_END = Duration.ofSeconds(3);

  private final JmDNS jmdns;
  private final String qualifiedType;
  private final ServiceListener listener;
  private final Optional<JmdnsTimers> timers;

  private JmdnsBrowser(JmDNS jmdns, String qualifiedType, ServiceListener listener) {
    this.jmdns = jmdns;
    this.qualifiedType = qualifiedType;
    this.listener = listener;
    this.timers =
        jmdns instanceof JmDNSImpl impl ? JmdnsTimers.of(impl) : Optional.<JmdnsTimers>empty();
  }

  /**
   * A factory whose JmDNS instances announce {@code hostName} (JmDNS always claims a host name of
   * its own) and run resolution requests on {@code requests}.
   */
  static Browser.Factory factory(String hostName, Executor requests) {
    JmdnsTimers.install();
    return (address, type, domain, events) ->
        open(address, hostName, type, domain, events, requests);
  }

  private static Browser open(
      InetAddress address,
      String hostName,
      ServiceType type,
      String domain,
      Events events,
      Executor requests)
      throws IOException {
    JmDNS jmdns = JmDNS.create(address, hostName);
    String qualifiedType = type.qualified(domain);
    ServiceListener listener =
        new ServiceListener() {
          @Override
          public void serviceAdded(ServiceEvent event) {
            // Responders usually send SRV/TXT/A with the PTR answer and JmDNS then resolves on its
            // own; asking explicitly covers responders that do not.
            try {
              requests.execute(
                  () -> {
                    try {
                      event.getDNS().requestServiceInfo(event.getType(), event.getName(), false, 1);
                    } catch (RuntimeException e) {
                      LOG.debug("resolving {} failed", event.getName(), e);
                    }
                  });
            } catch (RejectedExecutionException e) {
              LOG.debug("not resolving {}: executor stopped", event.getName());
            }
          }

          @Override
          public void serviceRemoved(ServiceEvent event) {
            events.removed(event.getName());
          }

          @Override
          public void serviceResolved(ServiceEvent event) {
            ServiceInfo info = event.getInfo();
            if (info != null && info.getName() != null) {
              events.resolved(toRecord(info, type, domain));
            }
          }
        };
    jmdns.addServiceListener(qualifiedType, listener);
    return new JmdnsBrowser(jmdns, qualifiedType, listener);
  }

  /**
   * Converts what JmDNS resolved into a {@link ServiceRecord}: host without trailing dot, IPv4
   * addresses first, IPv6 addresses without scope id, TXT re-decoded from the raw bytes (JmDNS's
   * own map lets later duplicates win, RFC 6763 wants the first).
   */
  static ServiceRecord toRecord(ServiceInfo info, ServiceType type, String domain) {
    String server = info.getServer();
    Optional<String> host =
        server == null || server.isBlank()
            ? Optional.empty()
            : Optional.of(server.endsWith(".") ? server.substring(0, server.length() - 1) : server);
    List<String> addresses = new ArrayList<>();
    for (InetAddress a : info.getInet4Addresses()) {
      addresses.add(a.getHostAddress());
    }
    for (Inet6Address a : info.getInet6Addresses()) {
      String literal = a.getHostAddress();
      int scope = literal.indexOf('%');
      addresses.add(scope < 0 ? literal : literal.substring(0, scope));
    }
    return new ServiceRecord(
        info.getName(),
        type,
        domain,
        host,
        addresses,
        info.getPort(),
        TxtEntry.decode(info.getTextBytes()));
  }

  /** Whether JmDNS's timers have ended (for tests). */
  boolean timersEnded() {
    return timers.map(JmdnsTimers::ended).orElse(false);
  }

  /** Closes JmDNS (about 2 s) and waits for its timers to end; blocks, never throws. */
  @Override
  public void close() {
    try {
      jmdns.removeServiceListener(qualifiedType, listener);
      jmdns.close();
    } catch (IOException | RuntimeException e) {
      LOG.debug("closing JmDNS failed", e);
    }
    try {
      if (timers.isPresent() && !timers.get().awaitEnded(TIMERS_END)) {
        LOG.warn(
            "JmDNS {}: its timers did not end within {} of its close", jmdns.getName(), TIMERS_END);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
