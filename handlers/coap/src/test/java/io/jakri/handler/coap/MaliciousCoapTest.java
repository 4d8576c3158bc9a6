package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.nio.ByteBuffer;
import java.nio.channels.DatagramChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BiFunction;
import org.eclipse.californium.core.coap.BlockOption;
import org.eclipse.californium.core.coap.CoAP;
import org.eclipse.californium.core.coap.Request;
import org.eclipse.californium.core.coap.Response;
import org.eclipse.californium.core.coap.Token;
import org.eclipse.californium.core.network.serialization.UdpDataParser;
import org.eclipse.californium.core.network.serialization.UdpDataSerializer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * Hostile responders on loopback against the real {@link UdpProber}: each answers the GET with what
 * its function makes of the request (several datagrams allowed), from a thread of the test. The
 * responders read and write well-formed messages with Californium's codec (as the prober does) and
 * hand-made bytes where the case is malformed.
 */
class MaliciousCoapTest {

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(1);
  private final List<Responder> responders = new ArrayList<>();

  @AfterEach
  void stop() throws Exception {
    for (Responder r : responders) {
      r.close();
    }
    scheduler.shutdownNow();
  }

  /** A UDP socket answering each datagram it gets with the datagrams {@code answer} returns. */
  private final class Responder implements AutoCloseable {
    final DatagramChannel channel;
    final Thread thread;

    Responder(BiFunction<Request, byte[], List<byte[]>> answer) throws Exception {
      channel = DatagramChannel.open();
      channel.bind(new InetSocketAddress(InetAddress.getLoopbackAddress(), 0));
      thread =
          new Thread(
              () -> {
                ByteBuffer in = ByteBuffer.allocate(2048);
                try {
                  while (true) {
                    in.clear();
                    var from = channel.receive(in);
                    byte[] request = java.util.Arrays.copyOf(in.array(), in.position());
                    Request m = (Request) new UdpDataParser().parseMessage(request);
                    for (byte[] out : answer.apply(m, request)) {
                      channel.send(ByteBuffer.wrap(out), from);
                    }
                  }
                } catch (Exception e) {
                  // closed
                }
              });
      thread.setDaemon(true);
      thread.start();
      responders.add(this);
    }

    Endpoint endpoint() throws Exception {
      return Endpoint.of((InetSocketAddress) channel.getLocalAddress());
    }

    @Override
    public void close() throws Exception {
      channel.close();
      thread.join(5000);
    }
  }

  /** A response to {@code request} with the given code, Content-Format, Block2 and payload. */
  static byte[] response(
      Token token,
      CoAP.ResponseCode code,
      Integer contentFormat,
      BlockOption block,
      byte[] payload) {
    Response response = new Response(code);
    response.setType(CoAP.Type.NON);
    response.setMID(1);
    response.setToken(token);
    if (contentFormat != null) {
      response.getOptions().setContentFormat(contentFormat);
    }
    if (block != null) {
      response.getOptions().setBlock2(block);
    }
    response.setPayload(payload);
    return new UdpDataSerializer().getByteArray(response);
  }

  /** A 2.05 response to {@code request}. */
  static byte[] response(
      Request request, Integer contentFormat, BlockOption block, byte[] payload) {
    return response(request.getToken(), CoAP.ResponseCode.CONTENT, contentFormat, block, payload);
  }

  private static int block2Num(Request m) {
    BlockOption b = m.getOptions().getBlock2();
    return b == null ? 0 : b.getNum();
  }

  private Prober.Answers ask(List<Endpoint> hosts) throws Exception {
    UdpProber prober = new UdpProber(scheduler, false, false, 5683, List.of());
    return prober.ask(hosts, Duration.ofMillis(1500)).get(10, TimeUnit.SECONDS);
  }

  @Test
  void blockWiseLinkFormatIsAssembled() throws Exception {
    byte[] doc =
        ("</a>;rt=x," + "</long>;title=\"" + "t".repeat(100) + "\"")
            .getBytes(StandardCharsets.UTF_8);
    Responder r =
        new Responder(
            (m, raw) -> {
              int num = block2Num(m);
              int from = num * 32;
              int to = Math.min(doc.length, from + 32);
              byte[] part = java.util.Arrays.copyOfRange(doc, from, to);
              return List.of(response(m, 40, new BlockOption(1, to < doc.length, num), part));
            });
    Prober.Answer answer = ask(List.of(r.endpoint())).answers().get(r.endpoint());
    assertThat(answer).isInstanceOf(Prober.Answer.Links.class);
    assertThat(((Prober.Answer.Links) answer).result().links())
        .extracting(Link::target)
        .containsExactly("/a", "/long");
  }

  @Test
  void endlessBlocksStopAtTheLimit() throws Exception {
    Responder r =
        new Responder(
            (m, raw) -> {
              int num = block2Num(m);
              return List.of(
                  response(
                      m,
                      40,
                      new BlockOption(6, true, num),
                      "</x>,".repeat(200).getBytes(StandardCharsets.US_ASCII)));
            });
    Prober.Answers answers = ask(List.of(r.endpoint()));
    assertThat(answers.answers().get(r.endpoint()))
        .isEqualTo(new Prober.Answer.Refused("link format over 16384 bytes"));
  }

  @Test
  void garbageWrongFormatsAndOversizedDatagramsAreCountedNotKept() throws Exception {
    Responder garbage =
        new Responder(
            (m, raw) -> List.of(new byte[] {1, 2, 3}, "hello".getBytes(StandardCharsets.US_ASCII)));
    Responder json =
        new Responder(
            (m, raw) -> List.of(response(m, 50, null, "{}".getBytes(StandardCharsets.US_ASCII))));
    Responder notFound =
        new Responder(
            (m, raw) ->
                List.of(
                    response(m.getToken(), CoAP.ResponseCode.NOT_FOUND, null, null, new byte[0])));
    Responder huge = new Responder((m, raw) -> List.of(response(m, 40, null, new byte[1900])));
    Responder foreignToken =
        new Responder(
            (m, raw) ->
                List.of(
                    response(
                        new Token(new byte[] {7}),
                        CoAP.ResponseCode.CONTENT,
                        40,
                        null,
                        "</x>".getBytes(StandardCharsets.US_ASCII))));
    Prober.Answers answers =
        ask(
            List.of(
                garbage.endpoint(),
                json.endpoint(),
                notFound.endpoint(),
                huge.endpoint(),
                foreignToken.endpoint()));
    assertThat(answers.answers())
        .containsOnly(
            Map.entry(
                json.endpoint(),
                new Prober.Answer.Refused("content format 50 is not link format (40)")),
            Map.entry(notFound.endpoint(), new Prober.Answer.Refused("answered 4.04, not 2.05")));
    assertThat(answers.problems().keySet()).anyMatch(k -> k.startsWith("not a CoAP message: "));
    assertThat(answers.problems())
        .containsKeys("datagram over 1500 bytes", "a CoAP message with a token not ours");
  }

  @Test
  void aFloodOfDatagramsAndRespondersIsBounded() throws Exception {
    // One responder sends 200 answers per GET; 300 responders answer (over MAX_ENDPOINTS).
    Responder chatty =
        new Responder(
            (m, raw) -> {
              List<byte[]> many = new ArrayList<>();
              for (int i = 0; i < 200; i++) {
                many.add(response(m, 40, null, "</a>".getBytes(StandardCharsets.US_ASCII)));
              }
              return many;
            });
    List<Endpoint> hosts = new ArrayList<>(List.of(chatty.endpoint()));
    for (int i = 0; i < 300; i++) {
      hosts.add(
          new Responder(
                  (m, raw) ->
                      List.of(
                          response(
                              m,
                              40,
                              null,
                              ("</r" + raw.length + ">").getBytes(StandardCharsets.US_ASCII))))
              .endpoint());
    }
    Prober.Answers answers = ask(hosts);
    assertThat(answers.answers()).hasSize(UdpProber.MAX_ENDPOINTS).containsKey(chatty.endpoint());
    assertThat(answers.problems())
        .containsKeys(
            "more than " + UdpProber.MAX_PER_SOURCE + " datagrams from one endpoint",
            "more than " + UdpProber.MAX_ENDPOINTS + " endpoints answered");
  }

  @Test
  void closeEndsARoundInFlightAndRefusesLaterOnes() throws Exception {
    Responder silent = new Responder((m, raw) -> List.of());
    UdpProber prober = new UdpProber(scheduler, false, false, 5683, List.of());
    var round = prober.ask(List.of(silent.endpoint()), Duration.ofSeconds(30));
    long begin = System.nanoTime();
    prober.close();
    assertThat(round.get(2, TimeUnit.SECONDS).answers()).isEmpty();
    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(1000);
    assertThat(prober.ask(List.of(silent.endpoint()), Duration.ofSeconds(1)))
        .isCompletedExceptionally();
  }

  /** Threads of the JVM not counting the JIT's, which come and go on their own. */
  private static java.util.Set<Thread> threads() {
    java.util.Set<Thread> all = new java.util.HashSet<>(Thread.getAllStackTraces().keySet());
    all.removeIf(t -> t.getName().startsWith("C1 ") || t.getName().startsWith("C2 "));
    return all;
  }

  @Test
  void aRoundStartsNoThread() throws Exception {
    byte[] doc = "</a>;rt=x".getBytes(StandardCharsets.US_ASCII);
    java.util.concurrent.atomic.AtomicInteger asked =
        new java.util.concurrent.atomic.AtomicInteger();
    Responder r =
        new Responder(
            (m, raw) -> {
              asked.incrementAndGet();
              return List.of(response(m, 40, null, doc));
            });
    Responder silent = new Responder((m, raw) -> List.of());
    scheduler.submit(() -> {}).get(); // the scheduler's one thread exists before counting
    java.util.Set<Thread> idle = threads();
    UdpProber prober = new UdpProber(scheduler, false, false, 5683, List.of());
    var round = prober.ask(List.of(r.endpoint(), silent.endpoint()), Duration.ofSeconds(30));
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
    while (asked.get() == 0 && System.nanoTime() < deadline) {
      Thread.onSpinWait();
    }
    assertThat(asked.get()).isPositive();
    scheduler.submit(() -> {}).get(); // and a drain had its turn after the answer was sent
    // the round is collecting (one host answered, one silent): the threads are the same
    assertThat(round).isNotDone();
    java.util.Set<Thread> during = threads();
    during.removeAll(idle);
    assertThat(during).isEmpty();
    System.out.println("COAP_THREADS idle=" + idle.size() + " during=" + threads().size());
    prober.close();
    assertThat(round.get(2, TimeUnit.SECONDS).answers()).containsKey(r.endpoint());
    java.util.Set<Thread> after = threads();
    after.removeAll(idle);
    assertThat(after).isEmpty();
    System.out.println("COAP_THREADS after=" + threads().size());
  }
}
