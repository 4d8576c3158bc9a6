package io.jakri.handler.coap;

import io.jakri.handler.SharedIpv4;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.net.Inet4Address;
import java.net.Inet6Address;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.NetworkInterface;
import java.net.ProtocolFamily;
import java.net.SocketException;
import java.net.StandardProtocolFamily;
import java.net.StandardSocketOptions;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.eclipse.californium.core.coap.BlockOption;
import org.eclipse.californium.core.coap.CoAP;
import org.eclipse.californium.core.coap.EmptyMessage;
import org.eclipse.californium.core.coap.MediaTypeRegistry;
import org.eclipse.californium.core.coap.Message;
import org.eclipse.californium.core.coap.Request;
import org.eclipse.californium.core.coap.Response;
import org.eclipse.californium.core.coap.Token;
import org.eclipse.californium.core.network.serialization.UdpDataParser;
import org.eclipse.californium.core.network.serialization.UdpDataSerializer;
import org.eclipse.californium.elements.util.Bytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The {@link Prober} on UDP: a non-confirmable {@code GET /.well-known/core} to All-CoAP-Nodes
 * ({@value #GROUP4}, and {@value #GROUP6} on each chosen interface) and to every listed host, from
 * one non-blocking {@link DatagramChannel} per address family on an ephemeral port (answers come
 * back unicast to it). A response with Block2 "more" gets its next block asked for, unicast.
 * Messages are written and read by Eclipse Californium's RFC 7252 codec ({@link UdpDataSerializer},
 * {@link UdpDataParser}); its endpoints are not used, so Californium starts no thread and holds no
 * exchange store here.
 *
 * <p>No thread of its own: the channels are drained every {@value #DRAIN_MILLIS} ms on the
 * scheduler until the timeout, then closed. Bounded: at most {@value #MAX_DATAGRAMS} datagrams per
 * round, {@value #MAX_PER_SOURCE} per source endpoint, {@value #MAX_ENDPOINTS} endpoints, and
 * {@link LinkFormat#MAX_BYTES} bytes of link format per endpoint; what is over is read and dropped
 * (counted by reason). Thread-safe: each round has its own channels.
 */
final class UdpProber implements Prober {

  static final String GROUP4 = "224.0.1.187";
  static final String GROUP6 = "ff02::fd";
  static final int MAX_DATAGRAMS = 4096;
  static final int MAX_PER_SOURCE = 64;
  static final int MAX_ENDPOINTS = 256;
  static final long DRAIN_MILLIS = 10;
  private static final int MAX_DATAGRAM = 1500 + 1;
  private static final Logger LOG = LoggerFactory.getLogger(UdpProber.class);
  private static final int RECEIVE_BUFFER = 1 << 20;
  // Stateless codec objects: the parser keeps only the option registry, the serializer nothing.
  private static final UdpDataParser PARSER = new UdpDataParser();
  private static final UdpDataSerializer SERIALIZER = new UdpDataSerializer();

  private final ScheduledExecutorService scheduler;
  private final boolean multicast;
  private final boolean ipv6;
  private final int port;
  private final List<String> interfaces;
  private final Set<Round> running = java.util.concurrent.ConcurrentHashMap.newKeySet();
  // Lines about interfaces sharing an IPv4 address, each logged once.
  private final SharedIpv4.Once sharedIpv4 = new SharedIpv4.Once();
  private volatile boolean closed;

  UdpProber(
      ScheduledExecutorService scheduler,
      boolean multicast,
      boolean ipv6,
      int port,
      List<String> interfaces) {
    this.scheduler = scheduler;
    this.multicast = multicast;
    this.ipv6 = ipv6;
    this.port = port;
    this.interfaces = List.copyOf(interfaces);
  }

  static UdpProber of(ScheduledExecutorService scheduler, CoapDetails details) {
    return new UdpProber(
        scheduler,
        details.multicast(),
        details.ipv6(),
        details.port(),
        details.networkInterfaces());
  }

  @Override
  public CompletableFuture<Answers> ask(List<Endpoint> hosts, Duration timeout) {
    CompletableFuture<Answers> result = new CompletableFuture<>();
    if (closed) {
      result.completeExceptionally(new IOException("closed"));
      return result;
    }
    Round round = new Round(result);
    running.add(round);
    result.whenComplete((answers, error) -> running.remove(round));
    if (closed) {
      round.finish();
      return result;
    }
    try {
      round.send(hosts);
    } catch (IOException | RuntimeException e) {
      round.closeChannels();
      result.completeExceptionally(e);
      return result;
    }
    if (round.sent == 0) {
      round.closeChannels();
      result.completeExceptionally(
          new IOException("no GET could be sent: " + String.join("; ", round.sendErrors)));
      return result;
    }
    try {
      ScheduledFuture<?> drain =
          scheduler.scheduleWithFixedDelay(
              round::drain, DRAIN_MILLIS, DRAIN_MILLIS, TimeUnit.MILLISECONDS);
      scheduler.schedule(
          () -> {
            drain.cancel(false);
            round.finish();
          },
          timeout.toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      round.closeChannels();
      result.completeExceptionally(e);
    }
    return result;
  }

  @Override
  public void close() {
    closed = true;
    for (Round round : running) {
      round.finish();
    }
  }

  /** Warns, once per line, of chosen interfaces that share an IPv4 address with another. */
  private void warnShared(List<NetworkInterface> chosen) {
    try {
      for (String line : sharedIpv4.fresh(chosen)) {
        LOG.warn("coap: {}", line);
      }
    } catch (SocketException e) {
      LOG.debug("coap: cannot list the network interfaces: {}", e.toString());
    }
  }

  private List<NetworkInterface> chosen(boolean v6) throws SocketException {
    List<NetworkInterface> chosen = new ArrayList<>();
    for (NetworkInterface nif : Collections.list(NetworkInterface.getNetworkInterfaces())) {
      if (!nif.isUp() || !nif.supportsMulticast()) {
        continue;
      }
      List<InetAddress> addresses =
          nif.getInterfaceAddresses().stream()
              .map(a -> a.getAddress())
              .filter(a -> v6 ? a instanceof Inet6Address : a instanceof Inet4Address)
              .toList();
      if (addresses.isEmpty()) {
        continue;
      }
      boolean named =
          interfaces.contains(nif.getName())
              || addresses.stream()
                  .anyMatch(
                      a ->
                          interfaces.contains(a.getHostAddress())
                              || interfaces.contains(a.getHostAddress().replaceAll("%.*", "")));
      if (interfaces.isEmpty() ? !nif.isLoopback() : named) {
        chosen.add(nif);
      }
    }
    return chosen;
  }

  /** One endpoint's link format arriving block by block. */
  private static final class Assembly {
    final ByteArrayOutputStream bytes = new ByteArrayOutputStream();
    int nextBlock;
  }

  private static String tokenOf(Message message) {
    Token token = message.getToken();
    return java.util.HexFormat.of().formatHex(token == null ? Bytes.EMPTY : token.getBytes());
  }

  /** One round; its methods run on the scheduler (or the caller, before the first drain). */
  private final class Round {
    private final CompletableFuture<Answers> result;
    private final Set<String> tokens = new HashSet<>();
    private final List<String> sendErrors = new ArrayList<>();
    private final Map<String, Integer> problems = new TreeMap<>();
    private final Map<Endpoint, Answer> answers = new LinkedHashMap<>();
    private final Map<Endpoint, Assembly> assemblies = new HashMap<>();
    private final Map<Endpoint, Integer> perSource = new HashMap<>();
    private final ByteBuffer buffer = ByteBuffer.allocate(MAX_DATAGRAM);
    private DatagramChannel channel4;
    private DatagramChannel channel6;
    private List<Endpoint> hosts = List.of();
    private int sent;
    private int datagrams;
    private boolean done;

    Round(CompletableFuture<Answers> result) {
      this.result = result;
    }

    private DatagramChannel open(ProtocolFamily family) throws IOException {
      DatagramChannel c = DatagramChannel.open(family);
      try {
        c.setOption(StandardSocketOptions.SO_RCVBUF, RECEIVE_BUFFER);
        c.setOption(StandardSocketOptions.IP_MULTICAST_LOOP, true);
        c.bind(null);
        c.configureBlocking(false);
        return c;
      } catch (IOException | RuntimeException e) {
        c.close();
        throw e;
      }
    }

    private byte[] request(Optional<BlockOption> block) {
      byte[] token = new byte[8];
      ThreadLocalRandom.current().nextBytes(token);
      tokens.add(java.util.HexFormat.of().formatHex(token));
      Request get = Request.newGet();
      get.setType(CoAP.Type.NON);
      get.setMID(ThreadLocalRandom.current().nextInt(1 << 16));
      get.setToken(new Token(token));
      get.getOptions().addUriPath(".well-known").addUriPath("core");
      block.ifPresent(b -> get.getOptions().setBlock2(b));
      return SERIALIZER.getByteArray(get);
    }

    void send(List<Endpoint> hosts) throws IOException {
      this.hosts = List.copyOf(hosts);
      boolean wants4 =
          multicast || hosts.stream().anyMatch(h -> h.address() instanceof Inet4Address);
      boolean wants6 =
          (multicast && ipv6) || hosts.stream().anyMatch(h -> h.address() instanceof Inet6Address);
      if (wants4) {
        channel4 = open(StandardProtocolFamily.INET);
      }
      if (wants6) {
        try {
          channel6 = open(StandardProtocolFamily.INET6);
        } catch (IOException | UnsupportedOperationException e) {
          sendErrors.add("no IPv6 socket: " + e.getMessage());
        }
      }
      if (multicast) {
        byte[] get = request(Optional.empty());
        List<NetworkInterface> v4 = chosen(false);
        warnShared(v4);
        for (NetworkInterface nif : v4) {
          multicastOn(channel4, nif, GROUP4, get);
        }
        if (ipv6 && channel6 != null) {
          for (NetworkInterface nif : chosen(true)) {
            multicastOn(channel6, nif, GROUP6, get);
          }
        }
      }
      for (Endpoint host : hosts) {
        DatagramChannel c = host.address() instanceof Inet6Address ? channel6 : channel4;
        if (c == null) {
          continue;
        }
        try {
          c.send(ByteBuffer.wrap(request(Optional.empty())), host.socketAddress());
          sent++;
        } catch (IOException e) {
          sendErrors.add("GET to " + host.id() + " not sent: " + e.getMessage());
        }
      }
    }

    private void multicastOn(DatagramChannel c, NetworkInterface nif, String group, byte[] get) {
      try {
        c.setOption(StandardSocketOptions.IP_MULTICAST_IF, nif);
        InetAddress address =
            group.contains(":")
                ? Inet6Address.getByAddress(null, InetAddress.getByName(group).getAddress(), nif)
                : InetAddress.getByName(group);
        c.send(ByteBuffer.wrap(get), new InetSocketAddress(address, port));
        sent++;
      } catch (IOException e) {
        sendErrors.add("GET to " + group + " on " + nif.getName() + " not sent: " + e.getMessage());
      }
    }

    synchronized void drain() {
      if (done) {
        return;
      }
      drain(channel4);
      drain(channel6);
      if (!multicast && !hosts.isEmpty() && answers.keySet().containsAll(hosts)) {
        finish(); // every listed host answered: no need to wait for the timeout
      }
    }

    private void drain(DatagramChannel c) {
      if (c == null) {
        return;
      }
      try {
        while (true) {
          buffer.clear();
          InetSocketAddress from = (InetSocketAddress) c.receive(buffer);
          if (from == null) {
            return;
          }
          if (datagrams >= MAX_DATAGRAMS) {
            problem("more than " + MAX_DATAGRAMS + " datagrams in a round");
            continue;
          }
          datagrams++;
          Endpoint source = Endpoint.of(from);
          if (!answers.containsKey(source)
              && !assemblies.containsKey(source)
              && answers.size() + assemblies.size() >= MAX_ENDPOINTS) {
            problem("more than " + MAX_ENDPOINTS + " endpoints answered");
            continue;
          }
          if (perSource.merge(source, 1, Integer::sum) > MAX_PER_SOURCE) {
            problem("more than " + MAX_PER_SOURCE + " datagrams from one endpoint");
            continue;
          }
          if (buffer.position() >= MAX_DATAGRAM) {
            problem("datagram over " + (MAX_DATAGRAM - 1) + " bytes");
            continue;
          }
          handle(c, source, buffer.array(), buffer.position());
        }
      } catch (IOException | RuntimeException e) {
        problem("reading answers failed: " + e);
      }
    }

    private void problem(String reason) {
      if (problems.size() < 64 || problems.containsKey(reason)) {
        problems.merge(reason, 1, Integer::sum);
      }
    }

    private void handle(DatagramChannel c, Endpoint source, byte[] data, int length)
        throws IOException {
      Message message;
      try {
        message = PARSER.parseMessage(Arrays.copyOf(data, length));
      } catch (RuntimeException e) { // Californium's MessageFormatException and its kin
        problem("not a CoAP message: " + e.getMessage());
        return;
      }
      if (!tokens.contains(tokenOf(message))) {
        problem("a CoAP message with a token not ours");
        return;
      }
      if (message.getType() == CoAP.Type.CON) { // a separate response, acknowledge it
        EmptyMessage ack = new EmptyMessage(CoAP.Type.ACK);
        ack.setMID(message.getMID());
        ack.setToken(Token.EMPTY);
        c.send(ByteBuffer.wrap(SERIALIZER.getByteArray(ack)), source.socketAddress());
      }
      if (answers.containsKey(source)) {
        return; // answered already (one answer per interface the GET went out on, say)
      }
      if (!(message instanceof Response m)) {
        return; // an empty ACK (the answer follows), or a request: nothing to read
      }
      if (m.getCode() != CoAP.ResponseCode.CONTENT) {
        answers.put(source, new Answer.Refused("answered " + m.getCode().text + ", not 2.05"));
        assemblies.remove(source);
        return;
      }
      int format = m.getOptions().getContentFormat();
      if (m.getOptions().hasContentFormat()
          && format != MediaTypeRegistry.APPLICATION_LINK_FORMAT) {
        answers.put(
            source,
            new Answer.Refused(
                "content format "
                    + format
                    + " is not link format ("
                    + MediaTypeRegistry.APPLICATION_LINK_FORMAT
                    + ")"));
        assemblies.remove(source);
        return;
      }
      Assembly assembly = assemblies.computeIfAbsent(source, s -> new Assembly());
      BlockOption block = m.getOptions().getBlock2();
      int num = block == null ? 0 : block.getNum();
      if (num != assembly.nextBlock) {
        return; // a duplicate or a stray block
      }
      byte[] payload = m.getPayload() == null ? Bytes.EMPTY : m.getPayload();
      if (assembly.bytes.size() + payload.length > LinkFormat.MAX_BYTES) {
        answers.put(
            source, new Answer.Refused("link format over " + LinkFormat.MAX_BYTES + " bytes"));
        assemblies.remove(source);
        return;
      }
      assembly.bytes.writeBytes(payload);
      if (block != null && block.isM()) {
        assembly.nextBlock = num + 1;
        BlockOption next = new BlockOption(block.getSzx(), false, num + 1);
        c.send(ByteBuffer.wrap(request(Optional.of(next))), source.socketAddress());
        return;
      }
      assemblies.remove(source);
      byte[] document = assembly.bytes.toByteArray();
      try {
        answers.put(source, new Answer.Links(LinkFormat.parse(document, document.length)));
      } catch (LinkFormat.Rejected e) {
        answers.put(source, new Answer.Refused(e.getMessage()));
      }
    }

    synchronized void finish() {
      if (done) {
        return;
      }
      drain(channel4);
      drain(channel6);
      done = true;
      for (Endpoint incomplete : assemblies.keySet()) {
        answers.put(incomplete, new Answer.Refused("block-wise transfer not finished in time"));
      }
      assemblies.clear();
      closeChannels();
      result.complete(new Answers(answers, problems, sendErrors));
    }

    void closeChannels() {
      for (DatagramChannel c : Arrays.asList(channel4, channel6)) {
        if (c != null) {
          try {
            c.close();
          } catch (IOException e) {
            // nothing left to do
          }
        }
      }
    }
  }
}
