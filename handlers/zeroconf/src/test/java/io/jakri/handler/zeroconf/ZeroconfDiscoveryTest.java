package io.jakri.handler.zeroconf;

import static io.jakri.handler.zeroconf.Services.service;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.testkit.RecordingListener;
import java.io.IOException;
import java.net.InetAddress;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class ZeroconfDiscoveryTest {

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private final RecordingListener listener = new RecordingListener();
  private final FakeBrowsers browsers = new FakeBrowsers();

  @AfterEach
  void stop() {
    browsers.release.countDown();
    scheduler.shutdownNow();
  }

  /** Browsers that hand their event sinks to the test and whose close can be made to block. */
  static final class FakeBrowsers implements Browser.Factory {
    final List<Browser.Events> events = new CopyOnWriteArrayList<>();
    final List<String> opened = new CopyOnWriteArrayList<>();
    final List<String> closed = new CopyOnWriteArrayList<>();
    final CountDownLatch release = new CountDownLatch(1);
    volatile boolean blockOnClose;
    volatile boolean failOpen;

    @Override
    public Browser open(InetAddress address, ServiceType type, String domain, Browser.Events e)
        throws IOException {
      if (failOpen) {
        throw new IOException("no multicast here");
      }
      String source = address.getHostAddress();
      opened.add(source);
      events.add(e);
      return () -> {
        if (blockOnClose) {
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException ex) {
            Thread.currentThread().interrupt();
          }
        }
        closed.add(source);
      };
    }
  }

  private static AddressSelector fixed(String... addresses) {
    return wanted -> {
      List<InetAddress> list =
          java.util.Arrays.stream(addresses)
              .map(
                  a -> {
                    try {
                      return InetAddress.getByName(a);
                    } catch (IOException e) {
                      throw new IllegalStateException(e);
                    }
                  })
              .toList();
      return new AddressSelector.Selection(list, List.of());
    };
  }

  private ZeroconfDiscovery start(String yaml, AddressSelector addresses) throws Exception {
    ZeroconfDiscovery discovery =
        new ZeroconfDiscovery(
            "zeroconf",
            ZeroconfDetails.parse(yaml).orThrow(),
            listener,
            scheduler,
            browsers,
            addresses,
            ZeroconfDiscovery.MAX_SERVICES);
    discovery.start();
    return discovery;
  }

  @Test
  void opensOneBrowserPerAddressOnTheScheduler() throws Exception {
    start("kind: _http._tcp", fixed("10.0.0.1", "10.0.0.2"));

    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.opened.size() == 2);
    assertThat(browsers.opened).containsExactly("10.0.0.1", "10.0.0.2");
  }

  @Test
  void reportsFullSnapshotOnEveryChangeAndNotForRepeats() throws Exception {
    start("kind: _http._tcp", fixed("10.0.0.1"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    Browser.Events events = browsers.events.get(0);

    events.resolved(service("a", 80));
    events.resolved(service("a", 80));
    events.resolved(service("b", 80));
    events.removed("a");

    assertThat(listener.snapshots())
        .extracting(s -> s.stream().map(d -> d.id()).toList())
        .containsExactly(
            List.of("a._http._tcp.local"),
            List.of("a._http._tcp.local", "b._http._tcp.local"),
            List.of("b._http._tcp.local"));
  }

  @Test
  void servicesTheFilterRejectsDoNotChangeTheSnapshot() throws Exception {
    start("kind: _http._tcp\nport: 80", fixed("10.0.0.1"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    Browser.Events events = browsers.events.get(0);

    events.resolved(service("a", 80));
    events.resolved(service("other", 81));

    assertThat(listener.snapshots()).hasSize(1);
    assertThat(listener.lastIds()).containsExactly("a._http._tcp.local");
  }

  @Test
  void closeReturnsAtOnceAndClosesBrowsersOnTheScheduler() throws Exception {
    ZeroconfDiscovery discovery = start("kind: _http._tcp", fixed("10.0.0.1"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    browsers.blockOnClose = true;

    long begin = System.nanoTime();
    discovery.close();
    long tookMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin);

    assertThat(tookMs).isLessThan(500);
    assertThat(browsers.closed).isEmpty();
    browsers.release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.closed.equals(List.of("10.0.0.1")));
  }

  @Test
  void nothingIsReportedAfterClose() throws Exception {
    ZeroconfDiscovery discovery = start("kind: _http._tcp", fixed("10.0.0.1"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    Browser.Events events = browsers.events.get(0);
    events.resolved(service("a", 80));

    discovery.close();
    discovery.close();
    events.resolved(service("b", 80));
    events.removed("a");

    assertThat(listener.snapshots()).hasSize(1);
  }

  @Test
  void browserOpenedAfterCloseIsClosedAgain() throws Exception {
    CountDownLatch selecting = new CountDownLatch(1);
    CountDownLatch proceed = new CountDownLatch(1);
    AddressSelector slow =
        wanted -> {
          selecting.countDown();
          try {
            proceed.await(5, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
          return fixed("10.0.0.1").select(wanted);
        };
    ZeroconfDiscovery discovery = start("kind: _http._tcp", slow);
    assertThat(selecting.await(5, TimeUnit.SECONDS)).isTrue();

    discovery.close();
    proceed.countDown();

    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(5))
        .until(() -> browsers.opened.size() == browsers.closed.size());
    assertThat(listener.failures()).isEmpty();
  }

  @Test
  void failsWhenNoAddressIsUsable() throws Exception {
    start(
        "kind: _http._tcp\ninterfaces: [nope0]",
        wanted ->
            new AddressSelector.Selection(List.of(), List.of("no network interface named nope0")));

    await().atMost(Duration.ofSeconds(5)).until(() -> !listener.failures().isEmpty());
    assertThat(listener.failures()).containsExactly("none of interfaces [nope0] is usable");
  }

  @Test
  void failsWhenNoBrowserCanBeOpened() throws Exception {
    browsers.failOpen = true;
    start("kind: _http._tcp", fixed("10.0.0.1"));

    await().atMost(Duration.ofSeconds(5)).until(() -> !listener.failures().isEmpty());
    assertThat(listener.failures().get(0)).startsWith("cannot browse on any of");
  }

  @Test
  void ignoresServicesBeyondTheCapWithoutFailing() throws Exception {
    ZeroconfDiscovery discovery =
        new ZeroconfDiscovery(
            "zeroconf",
            ZeroconfDetails.parse("kind: _http._tcp").orThrow(),
            listener,
            scheduler,
            browsers,
            fixed("10.0.0.1"),
            2);
    discovery.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    Browser.Events events = browsers.events.get(0);

    events.resolved(service("a", 1));
    events.resolved(service("b", 1));
    events.resolved(service("c", 1));

    assertThat(listener.lastIds()).containsExactly("a._http._tcp.local", "b._http._tcp.local");
    assertThat(listener.failures()).isEmpty();
  }

  @Test
  void sameServiceOnTwoInterfacesIsOneDevice() throws Exception {
    start("kind: _http._tcp", fixed("10.0.0.1", "10.0.0.2"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 2);

    browsers.events.get(0).resolved(service("a", 80));
    browsers.events.get(1).resolved(service("a", 80));
    browsers.events.get(0).removed("a");

    assertThat(listener.lastIds()).containsExactly("a._http._tcp.local");
    assertThat(listener.last().orElseThrow().get(0).properties())
        .containsEntry("AKRI_ZEROCONF_DEVICE_PORT", "80");
  }

  @Test
  void txtFilterMatchesOnceTxtArrives() throws Exception {
    start("kind: _http._tcp\ntxtRecords: {model: x}", fixed("10.0.0.1"));
    await().atMost(Duration.ofSeconds(5)).until(() -> browsers.events.size() == 1);
    Browser.Events events = browsers.events.get(0);

    events.resolved(service("a", 80));
    assertThat(listener.lastIds()).isEmpty();
    events.resolved(service("a", 80, TxtEntry.of("model", "x")));

    assertThat(listener.lastIds()).containsExactly("a._http._tcp.local");
    assertThat(listener.last().orElseThrow().get(0).properties())
        .containsAllEntriesOf(Map.of("AKRI_ZEROCONF_DEVICE_MODEL", "x"));
  }
}
