package io.jakri.handler.onvif;

import io.jakri.handler.SharedIpv4;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Probes over IPv4 multicast to {@value WsDiscovery#MULTICAST_GROUP}:{@value WsDiscovery#PORT}, as
 * Akri does, from one non-blocking {@link DatagramChannel} on an ephemeral port (answers come back
 * unicast to it). The probe is sent once on every chosen interface (Akri sends it once, where the
 * routing table says), so a node with several networks probes all of them.
 *
 * <p>No thread of its own: the channel is drained every {@value #DRAIN_MILLIS} ms on the scheduler
 * until the timeout, then closed. At most {@value #MAX_DATAGRAMS} datagrams are parsed per probe,
 * and at most {@value #MAX_PER_SOURCE} from one source address (a device answers a probe with one
 * datagram): later ones are read and dropped, so one flooding host can neither make a round
 * unbounded nor crowd the others out (short of overflowing the socket's receive buffer, which no
 * UDP receiver can prevent). Thread-safe: each probe has its own channel.
 */
final class MulticastProber implements Prober {

  private static final Logger LOG = LoggerFactory.getLogger(MulticastProber.class);
  static final int MAX_DATAGRAMS = 1024;
  static final int MAX_PER_SOURCE = 64;
  static final int MAX_RESOLVES = 64;
  static final long DRAIN_MILLIS = 20;
  private static final int RECEIVE_BUFFER = 1 << 20;

  private final ScheduledExecutorService scheduler;
  private final List<String> interfaces;
  private final String configuration;
  private final SharedIpv4.Once sharedIpv4 = new SharedIpv4.Once();

  /**
   * @param interfaces interface names or local IPv4 addresses to probe on; empty = all suitable
   */
  MulticastProber(
      ScheduledExecutorService scheduler, List<String> interfaces, String configuration) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.interfaces = List.copyOf(interfaces);
    this.configuration = configuration;
  }

  @Override
  public CompletableFuture<Answers> probe(ProbeType type, Duration timeout) {
    CompletableFuture<Answers> result = new CompletableFuture<>();
    String messageId = "uuid:" + UUID.randomUUID();
    DatagramChannel channel;
    List<NetworkInterface> chosen;
    InetSocketAddress group;
    try {
      chosen = choose();
      for (String line : sharedIpv4.fresh(chosen)) {
        LOG.warn("onvif({}): {}", configuration, line);
      }
      if (chosen.isEmpty()) {
        result.completeExceptionally(
            new IOException(
                interfaces.isEmpty()
                    ? "no network interface is up, multicast-capable, not loopback and IPv4"
                    : "none of interfaces " + interfaces + " is up and multicast-capable"));
        return result;
      }
      channel = DatagramChannel.open(StandardProtocolFamily.INET);
      channel.setOption(StandardSocketOptions.SO_RCVBUF, RECEIVE_BUFFER);
      channel.bind(new InetSocketAddress(InetAddress.getByName("0.0.0.0"), 0));
      channel.configureBlocking(false);
      ByteBuffer probe =
          ByteBuffer.wrap(WsDiscovery.probe(messageId, type).getBytes(StandardCharsets.UTF_8));
      group =
          new InetSocketAddress(
              InetAddress.getByName(WsDiscovery.MULTICAST_GROUP), WsDiscovery.PORT);
      int sent = 0;
      IOException lastError = null;
      for (NetworkInterface nif : chosen) {
        try {
          channel.setOption(StandardSocketOptions.IP_MULTICAST_IF, nif);
          channel.send(probe.duplicate(), group);
          sent++;
        } catch (IOException e) {
          lastError = e;
          LOG.debug(
              "onvif({}): probe on {} failed: {}", configuration, nif.getName(), e.toString());
        }
      }
      if (sent == 0) {
        channel.close();
        result.completeExceptionally(
            new IOException("cannot send a probe on any interface: " + lastError, lastError));
        return result;
      }
    } catch (IOException | RuntimeException e) {
      result.completeExceptionally(e);
      return result;
    }
    Collector collector = new Collector(channel, messageId, result, chosen, group);
    long deadline = System.nanoTime() + timeout.toNanos();
    ScheduledFuture<?> drain =
        scheduler.scheduleWithFixedDelay(
            collector::drain, DRAIN_MILLIS, DRAIN_MILLIS, TimeUnit.MILLISECONDS);
    scheduler.schedule(
        () -> {
          drain.cancel(false);
          collector.finish();
        },
        Math.max(0, deadline - System.nanoTime()),
        TimeUnit.NANOSECONDS);
    return result;
  }

  private List<NetworkInterface> choose() throws SocketException {
    List<NetworkInterface> chosen = new ArrayList<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nif.isUp() || !nif.supportsMulticast() || nif.isLoopback()) {
        continue;
      }
      List<String> v4 =
          nif.getInterfaceAddresses().stream()
              .map(a -> a.getAddress())
              .filter(a -> a instanceof Inet4Address)
              .map(InetAddress::getHostAddress)
              .toList();
      if (v4.isEmpty()) {
        continue;
      }
      if (interfaces.isEmpty()
          || interfaces.contains(nif.getName())
          || v4.stream().anyMatch(interfaces::contains)) {
        chosen.add(nif);
      }
    }
    return chosen;
  }

  /**
   * Drains one probe's channel; all methods run on the scheduler, never concurrently. A match
   * without {@code XAddrs} is resolved: a Resolve for its endpoint is multicast on the same
   * interfaces (at most {@value #MAX_RESOLVES} per probe) and the ResolveMatch, read like a
   * ProbeMatch, brings the addresses.
   */
  private final class Collector {
    private final DatagramChannel channel;
    private final java.util.Set<String> ours = new java.util.HashSet<>();
    private final java.util.Set<String> resolving = new java.util.HashSet<>();
    private final List<NetworkInterface> chosen;
    private final InetSocketAddress group;
    private final CompletableFuture<Answers> result;
    private final ByteBuffer buffer = ByteBuffer.allocate(WsDiscovery.MAX_DATAGRAM + 1);
    private final List<ProbeMatch> matches = new ArrayList<>();
    private final java.util.Map<InetAddress, Integer> perSource = new java.util.HashMap<>();
    private int datagrams;
    private int rejected;
    private int dropped;
    private boolean done;

    Collector(
        DatagramChannel channel,
        String messageId,
        CompletableFuture<Answers> result,
        List<NetworkInterface> chosen,
        InetSocketAddress group) {
      this.channel = channel;
      this.ours.add(messageId);
      this.result = result;
      this.chosen = chosen;
      this.group = group;
    }

    private void resolve(ProbeMatch match) {
      if (resolving.size() >= MAX_RESOLVES || !resolving.add(match.address())) {
        return;
      }
      String id = "uuid:" + UUID.randomUUID();
      ours.add(id);
      ByteBuffer message =
          ByteBuffer.wrap(
              WsDiscovery.resolve(id, match.address()).getBytes(StandardCharsets.UTF_8));
      for (NetworkInterface nif : chosen) {
        try {
          channel.setOption(StandardSocketOptions.IP_MULTICAST_IF, nif);
          channel.send(message.duplicate(), group);
        } catch (IOException e) {
          LOG.debug(
              "onvif({}): resolve on {} failed: {}", configuration, nif.getName(), e.toString());
        }
      }
    }

    synchronized void drain() {
      if (done) {
        return;
      }
      try {
        while (true) {
          buffer.clear();
          java.net.SocketAddress from = channel.receive(buffer);
          if (from == null) {
            return;
          }
          InetAddress source = ((InetSocketAddress) from).getAddress();
          if (datagrams >= MAX_DATAGRAMS
              || perSource.merge(source, 1, Integer::sum) > MAX_PER_SOURCE) {
            dropped++;
            continue;
          }
          datagrams++;
          buffer.flip();
          try {
            for (ProbeMatch m : WsDiscovery.probeMatches(buffer.array(), buffer.limit(), ours)) {
              LOG.debug(
                  "onvif({}): {} answered for {}: XAddrs {}",
                  configuration,
                  source.getHostAddress(),
                  m.uuid(),
                  m.xaddrs());
              if (m.xaddrs().isEmpty()) {
                resolve(m);
              } else {
                matches.add(m);
              }
            }
          } catch (Xml.Rejected e) {
            rejected++;
            LOG.debug("onvif({}): ignored an answer: {}", configuration, e.getMessage());
          }
        }
      } catch (IOException | RuntimeException e) {
        LOG.warn("onvif({}): reading probe answers failed: {}", configuration, e.toString());
      }
    }

    synchronized void finish() {
      drain();
      done = true;
      try {
        channel.close();
      } catch (IOException e) {
        // nothing left to read from it
      }
      result.complete(new Answers(matches, datagrams, rejected, dropped));
    }
  }
}
