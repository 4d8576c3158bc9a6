package io.jakri.handler.coap;

import static org.assertj.core.api.Assertions.assertThat;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.Logger;
import ch.qos.logback.classic.spi.ILoggingEvent;
import ch.qos.logback.core.read.ListAppender;
import io.jakri.handler.testkit.RecordingListener;
import java.net.InetAddress;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.slf4j.LoggerFactory;

class CoapDiscoveryTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final AtomicLong now = new AtomicLong();
  private final RecordingListener listener = new RecordingListener();
  private final ListAppender<ILoggingEvent> logs = new ListAppender<>();
  private final Logger logger = (Logger) LoggerFactory.getLogger(CoapDiscovery.class);

  @BeforeEach
  void captureLogs() {
    logs.start();
    logger.addAppender(logs);
  }

  @AfterEach
  void stop() {
    logger.detachAppender(logs);
    scheduler.shutdownNow();
  }

  private CoapDiscovery discovery(String yaml) {
    CoapDetails details = CoapDetails.parse(yaml).details().orElseThrow();
    Prober never = (hosts, timeout) -> new CompletableFuture<>();
    return new CoapDiscovery("c", details, listener, scheduler, never, now::get);
  }

  private static Endpoint endpoint(String ip, int port) throws Exception {
    return new Endpoint(InetAddress.getByName(ip), port);
  }

  private static Prober.Answer links(String document) throws Exception {
    return new Prober.Answer.Links(LinkFormat.parse(document));
  }

  private static Prober.Answers answers(Map<Endpoint, Prober.Answer> answers) {
    return new Prober.Answers(answers, Map.of(), List.of());
  }

  @Test
  void endpointsWithMatchingLinksBecomeDevicesThatLeaveAfterTheGrace() throws Exception {
    CoapDiscovery d = discovery("rt: [temp]\ngracePeriodSeconds: 30");
    Endpoint a = endpoint("10.0.0.1", 5683);
    Endpoint b = endpoint("10.0.0.2", 5683);
    d.settle(
        answers(
            Map.of(
                a, links("</t>;rt=temp;if=sensor,</x>;rt=other"),
                b, links("</x>;rt=other"))));
    assertThat(listener.lastIds()).containsExactly("10.0.0.1:5683");
    assertThat(listener.last().orElseThrow().get(0).properties())
        .containsEntry("COAP_ENDPOINT", "coap://10.0.0.1:5683")
        .containsEntry("COAP_HOST", "10.0.0.1")
        .containsEntry("COAP_PORT", "5683")
        .containsEntry("COAP_LINKS", "/t;rt=temp;if=sensor")
        .containsEntry("COAP_LINK_COUNT", "1")
        .containsEntry("COAP_RESOURCE_TYPES", "temp");
    assertThat(listener.last().orElseThrow().get(0).shared()).isTrue();

    now.addAndGet(Duration.ofSeconds(29).toNanos());
    d.settle(answers(Map.of()));
    assertThat(listener.lastIds()).containsExactly("10.0.0.1:5683");
    assertThat(listener.snapshots()).hasSize(1); // unchanged: not reported again

    d.settle(answers(Map.of(a, links("</t>;rt=temp,</u>;rt=temp"))));
    assertThat(listener.last().orElseThrow().get(0).properties())
        .containsEntry("COAP_LINKS", "/t;rt=temp,/u;rt=temp");

    now.addAndGet(Duration.ofSeconds(30).toNanos());
    d.settle(answers(Map.of(b, new Prober.Answer.Refused("answered 4.04, not 2.05"))));
    assertThat(listener.lastIds()).isEmpty();
  }

  @Test
  void anAnswerWithoutMatchingLinksRemovesTheDeviceAtOnce() throws Exception {
    CoapDiscovery d = discovery("paths: {include: [/keep]}");
    Endpoint a = endpoint("10.0.0.1", 5683);
    d.settle(answers(Map.of(a, links("</keep>"))));
    assertThat(listener.lastIds()).containsExactly("10.0.0.1:5683");
    d.settle(answers(Map.of(a, links("</other>"))));
    assertThat(listener.lastIds()).isEmpty();
  }

  @Test
  void aFloodOfBadAnswersWarnsOncePerReason() throws Exception {
    CoapDiscovery d = discovery("");
    for (int round = 0; round < 3; round++) {
      Map<Endpoint, Prober.Answer> flood = new HashMap<>();
      for (int i = 0; i < 200; i++) {
        flood.put(
            endpoint("10.0." + (i / 250) + "." + (i % 250 + 1), 5683),
            i % 2 == 0
                ? links("</ok>,broken" + i + ",</also-ok>;=x")
                : new Prober.Answer.Refused("link format over 16384 bytes"));
      }
      d.settle(
          new Prober.Answers(
              flood, Map.of("not a CoAP message: token length over 8", 1000), List.of()));
    }
    assertThat(listener.lastIds()).hasSize(100);
    List<String> warnings =
        logs.list.stream()
            .filter(e -> e.getLevel() == Level.WARN)
            .map(ILoggingEvent::getFormattedMessage)
            .toList();
    assertThat(warnings)
        .hasSize(4)
        .anyMatch(w -> w.contains("does not start with '<'"))
        .anyMatch(w -> w.contains("a parameter without a name"))
        .anyMatch(w -> w.contains("link format over 16384 bytes"))
        .anyMatch(w -> w.contains("token length over 8"));
  }

  @Test
  void noSnapshotAfterClose() throws Exception {
    CoapDiscovery d = discovery("");
    d.close();
    d.settle(answers(Map.of(endpoint("10.0.0.1", 5683), links("</a>"))));
    assertThat(listener.snapshots()).isEmpty();
    d.close();
  }

  @Test
  void compactFormEncodesWhatWouldBreakIt() throws Exception {
    List<Link> l = LinkFormat.parse("<a,b%;c>;rt=\"x=y z\";if=\"s;t\"").links();
    assertThat(CoapDevices.compact(l)).isEqualTo("a%2Cb%25%3Bc;rt=x%3Dy z;if=s%3Bt");
    List<Link> ok = LinkFormat.parse("</a%20b;c=d>;rt=\"x=y z\";if=\"s;t\"").links();
    assertThat(CoapDevices.compact(ok)).isEqualTo("/a%2520b%3Bc%3Dd;rt=x%3Dy z;if=s%3Bt");
    List<Link> many = LinkFormat.parse("</" + "x".repeat(200) + ">,".repeat(100)).links();
    assertThat(CoapDevices.compact(many).length()).isLessThanOrEqualTo(CoapDevices.MAX_LINKS_CHARS);
  }
}
