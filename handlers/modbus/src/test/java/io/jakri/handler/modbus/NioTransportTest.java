package io.jakri.handler.modbus;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.handler.modbus.ModbusTransport.Failure;
import io.jakri.handler.modbus.ModbusTransport.ProbeException;
import io.jakri.handler.modbus.ModbusTransport.Query;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class NioTransportTest {

  private ScheduledExecutorService scheduler;
  private NioTransport transport;
  private FakePeers peers;

  @BeforeEach
  void setUp() {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    transport = new NioTransport(scheduler);
    peers = new FakePeers();
  }

  @AfterEach
  void tearDown() throws Exception {
    transport.close();
    peers.close();
    scheduler.shutdownNow();
  }

  private List<Identity> identify(int port, List<Integer> units, boolean each, long timeoutMillis)
      throws Exception {
    return transport
        .identify(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
            new Query("127.0.0.1", units, each, Duration.ofMillis(timeoutMillis)))
        .get(10, TimeUnit.SECONDS);
  }

  private Failure failure(int port, long timeoutMillis) {
    ExecutionException e =
        org.junit.jupiter.api.Assertions.assertThrows(
            ExecutionException.class, () -> identify(port, List.of(1), false, timeoutMillis));
    assertThat(e.getCause()).isInstanceOf(ProbeException.class);
    return ((ProbeException) e.getCause()).failure();
  }

  @Test
  void identifiesAPeerInOnePage() throws Exception {
    int port =
        peers
            .start(FakePeers.identifying(10, "Acme", "PC-1", "1.0", "http://acme", "Widget"))
            .port();
    List<Identity> found = identify(port, List.of(1), false, 1000);
    assertThat(found)
        .singleElement()
        .satisfies(
            i -> {
              assertThat(i.unitId()).isEqualTo(1);
              assertThat(i.port()).isEqualTo(port);
              assertThat(i.objects())
                  .containsExactly(
                      Map.entry(0, "Acme"),
                      Map.entry(1, "PC-1"),
                      Map.entry(2, "1.0"),
                      Map.entry(3, "http://acme"),
                      Map.entry(4, "Widget"));
            });
  }

  @Test
  void followsMoreFollowsPages() throws Exception {
    int port = peers.start(FakePeers.identifying(2, "Acme", "PC-1", "1.0", "u", "p")).port();
    assertThat(identify(port, List.of(1), false, 1000).get(0).objects()).hasSize(5);
  }

  @Test
  void pagesThatDoNotAdvanceAreRefused() throws Exception {
    int port =
        peers
            .start(
                (in, out) -> {
                  byte[] request;
                  while ((request = FakePeers.request(in)) != null) {
                    out.write(
                        FakePeers.reply(
                            request, DeviceIdCodecTest.page(request[9], 0xFF, 0, 0, "A")));
                  }
                })
            .port();
    Failure failure = failure(port, 1000);
    assertThat(failure.category()).isEqualTo("malformed reply");
    assertThat(failure.detail()).contains("does not advance");
  }

  @Test
  void eachUnitOrFirstAnsweringUnit() throws Exception {
    int port =
        peers
            .start(
                (in, out) -> {
                  byte[] request;
                  while ((request = FakePeers.request(in)) != null) {
                    int unit = request[6] & 0xFF;
                    byte[] pdu =
                        unit == 1
                            ? new byte[] {(byte) 0xAB, 0x0B}
                            : DeviceIdCodecTest.page(
                                request[9], 0, 0, 0, "V" + unit, 1, "P", 2, "R");
                    out.write(FakePeers.reply(request, pdu));
                  }
                })
            .port();
    assertThat(identify(port, List.of(1, 255, 0), false, 1000))
        .extracting(Identity::unitId)
        .containsExactly(255);
    assertThat(identify(port, List.of(1, 255, 0), true, 1000))
        .extracting(Identity::vendor)
        .containsExactly("V255", "V0");
  }

  @Test
  void regularRefusedFallsBackToBasic() throws Exception {
    int port =
        peers
            .start(
                (in, out) -> {
                  byte[] request;
                  while ((request = FakePeers.request(in)) != null) {
                    byte[] pdu =
                        request[9] == 2
                            ? new byte[] {(byte) 0xAB, 0x03}
                            : DeviceIdCodecTest.page(1, 0, 0, 0, "A", 1, "B", 2, "C");
                    out.write(FakePeers.reply(request, pdu));
                  }
                })
            .port();
    assertThat(identify(port, List.of(1), false, 1000).get(0).revision()).isEqualTo("C");
  }

  @Test
  void deviceWithoutIdentificationIsNotADevice() throws Exception {
    Failure failure = failure(peers.start(FakePeers.NO_IDENTIFICATION).port(), 1000);
    assertThat(failure.reachable()).isTrue();
    assertThat(failure.category()).isEqualTo("exception 1");
  }

  @Test
  void identityWithoutTheMandatoryObjectsIsRefused() throws Exception {
    Failure failure = failure(peers.start(FakePeers.identifying(10, "Acme", "PC-1")).port(), 1000);
    assertThat(failure.category()).isEqualTo("incomplete identity");
  }

  @Test
  void silentPeerTimesOut() throws Exception {
    long start = System.nanoTime();
    Failure failure = failure(peers.start(FakePeers.SILENT).port(), 200);
    assertThat(failure.category()).isEqualTo("no reply");
    assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(3));
  }

  @Test
  void dribblingPeerIsCutOffByTheRequestTimeout() throws Exception {
    int port =
        peers
            .start(
                (in, out) -> {
                  byte[] request = FakePeers.request(in);
                  byte[] header = {request[0], request[1], 0, 0, 0, (byte) 200, 1};
                  for (byte b : header) {
                    out.write(b);
                    out.flush();
                  }
                  while (true) {
                    out.write(0);
                    out.flush();
                    try {
                      Thread.sleep(50); // the peer's pace, not synchronisation
                    } catch (InterruptedException e) {
                      return;
                    }
                  }
                })
            .port();
    Failure failure = failure(port, 300);
    assertThat(failure.category()).isEqualTo("no reply");
  }

  @Test
  void garbageIsMalformed() throws Exception {
    Failure failure = failure(peers.start(FakePeers.GARBAGE).port(), 1000);
    assertThat(failure.category()).isEqualTo("malformed reply");
    assertThat(failure.detail()).contains("is not Modbus");
  }

  @Test
  void floodOfForeignFramesIsCutOff() throws Exception {
    Failure failure = failure(peers.start(FakePeers.FLOOD).port(), 1000);
    assertThat(failure.category()).isEqualTo("malformed reply");
    assertThat(failure.detail()).contains("transactions not asked");
  }

  @Test
  void oversizedFrameIsRefusedBeforeItsBody() throws Exception {
    Failure failure = failure(peers.start(FakePeers.OVERSIZED).port(), 1000);
    assertThat(failure.detail()).contains("MBAP length 32767");
  }

  @Test
  void closedPortIsUnreachable() throws Exception {
    int port;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      port = s.getLocalPort();
    }
    Failure failure = failure(port, 1000);
    assertThat(failure.reachable()).isFalse();
  }

  @Test
  void closeFailsWhatIsOpenAndRefusesMore() throws Exception {
    int port = peers.start(FakePeers.SILENT).port();
    var pending =
        transport.identify(
            new InetSocketAddress(InetAddress.getLoopbackAddress(), port),
            new Query("127.0.0.1", List.of(1), false, Duration.ofSeconds(30)));
    transport.close();
    assertThatThrownBy(() -> pending.get(5, TimeUnit.SECONDS))
        .hasCauseInstanceOf(ProbeException.class);
    assertThatThrownBy(() -> identify(port, List.of(1), false, 1000))
        .hasMessageContaining("closed");
  }
}
