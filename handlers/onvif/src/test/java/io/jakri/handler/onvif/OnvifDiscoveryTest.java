package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.testkit.RecordingListener;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** The rounds of {@link OnvifDiscovery} with a scripted network (no sockets). */
class OnvifDiscoveryTest {

  private static final String A = "http://10.0.0.1/onvif/device_service";
  private static final String B = "http://10.0.0.2/onvif/device_service";

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private final AtomicReference<List<ProbeMatch>> network = new AtomicReference<>(List.of());
  private final Set<String> responsive = ConcurrentHashMap.newKeySet();
  private final Map<String, AtomicInteger> interfaceCalls = new ConcurrentHashMap<>();
  // GetNetworkInterfaces answers that still fail (a timeout under load), per camera.
  private final Map<String, AtomicInteger> interfaceFailures = new ConcurrentHashMap<>();
  private final AtomicInteger rounds = new AtomicInteger();

  private final Prober prober =
      (type, timeout) -> {
        rounds.incrementAndGet();
        return CompletableFuture.completedFuture(new Prober.Answers(network.get(), 0, 0, 0));
      };

  private final DeviceService service =
      new DeviceService() {
        @Override
        public CompletableFuture<Void> systemDateAndTime(String url) {
          return responsive.contains(url)
              ? CompletableFuture.completedFuture(null)
              : CompletableFuture.failedFuture(new RuntimeException("refused"));
        }

        @Override
        public CompletableFuture<IpAndMac> networkInterfaces(
            String url, Optional<Credentials.Credential> credential) {
          interfaceCalls.computeIfAbsent(url, u -> new AtomicInteger()).incrementAndGet();
          AtomicInteger failures = interfaceFailures.get(url);
          if (failures != null && failures.getAndDecrement() > 0) {
            return CompletableFuture.failedFuture(
                new java.util.concurrent.TimeoutException("no answer within 1 s"));
          }
          return CompletableFuture.completedFuture(new IpAndMac("10.0.0.9", "00:00:00:00:00:09"));
        }
      };

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private OnvifDiscovery start(RecordingListener listener) {
    OnvifDetails details =
        new OnvifDetails(
            Optional.empty(),
            Optional.empty(),
            Optional.empty(),
            Optional.empty(),
            Duration.ofMillis(1),
            ProbeType.NETWORK_VIDEO_TRANSMITTER,
            List.of(),
            Duration.ofMillis(20));
    OnvifDiscovery d =
        new OnvifDiscovery(
            "cfg", details, Credentials.none(), listener, scheduler, prober, service);
    d.start();
    return d;
  }

  private void awaitRounds(int more) {
    int target = rounds.get() + more;
    await().atMost(Duration.ofSeconds(10)).until(() -> rounds.get() >= target);
  }

  @Test
  void firstRoundReportsEvenAnEmptySnapshot() {
    RecordingListener listener = new RecordingListener();
    try (OnvifDiscovery d = start(listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> !listener.snapshots().isEmpty());
      assertThat(listener.snapshots().get(0)).isEmpty();
    }
  }

  @Test
  void knownCamerasAreNotQueriedAgainUntilTheyLeave() {
    RecordingListener listener = new RecordingListener();
    responsive.add(A);
    network.set(List.of(new ProbeMatch("uuid-a", List.of(A), List.of())));
    try (OnvifDiscovery d = start(listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().size() == 1);
      awaitRounds(5);
      assertThat(interfaceCalls.get(A).get()).isEqualTo(1);
      assertThat(listener.snapshots()).hasSize(1);

      network.set(List.of());
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().isEmpty());
      network.set(List.of(new ProbeMatch("uuid-a", List.of(A), List.of())));
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().size() == 1);
      assertThat(interfaceCalls.get(A).get()).isEqualTo(2);
    }
  }

  @Test
  void aCameraWhoseGetNetworkInterfacesTimedOutIsAskedAgainUntilItsPropertiesAreComplete() {
    RecordingListener listener = new RecordingListener();
    responsive.add(A);
    interfaceFailures.put(A, new AtomicInteger(3));
    network.set(List.of(new ProbeMatch("uuid-a", List.of(A), List.of())));
    try (OnvifDiscovery d = start(listener)) {
      // Admitted without an address first, as Akri does, then completed once it answers.
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().size() == 1);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(
              () ->
                  listener
                      .snapshots()
                      .get(listener.snapshots().size() - 1)
                      .get(0)
                      .properties()
                      .containsKey(OnvifDevices.IP_ADDRESS));
      DiscoveredDevice complete = listener.snapshots().get(listener.snapshots().size() - 1).get(0);
      assertThat(complete.properties())
          .containsEntry(OnvifDevices.IP_ADDRESS, "10.0.0.9")
          .containsEntry(OnvifDevices.MAC_ADDRESS, "00:00:00:00:00:09");
      assertThat(listener.snapshots().get(0).get(0).properties())
          .doesNotContainKey(OnvifDevices.IP_ADDRESS);
      assertThat(interfaceCalls.get(A).get()).isEqualTo(4);
      // Complete now: not asked again while it stays.
      awaitRounds(5);
      assertThat(interfaceCalls.get(A).get()).isEqualTo(4);
    }
  }

  @Test
  void aCameraThatStopsAnsweringGetSystemDateAndTimeLeaves() {
    RecordingListener listener = new RecordingListener();
    responsive.addAll(List.of(A, B));
    network.set(
        List.of(
            new ProbeMatch("uuid-a", List.of(A), List.of()),
            new ProbeMatch("uuid-b", List.of(B), List.of())));
    try (OnvifDiscovery d = start(listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> listener.lastIds().size() == 2);
      responsive.remove(B);
      await()
          .atMost(Duration.ofSeconds(10))
          .until(() -> listener.lastIds().equals(List.of(A + "-uuid-a")));
    }
  }

  @Test
  void theFirstUuidClaimingAnAddressKeepsIt() {
    RecordingListener listener = new RecordingListener();
    responsive.add(A);
    network.set(
        List.of(
            new ProbeMatch("uuid-real", List.of(A), List.of()),
            new ProbeMatch("uuid-spoof", List.of(A), List.of())));
    try (OnvifDiscovery d = start(listener)) {
      await().atMost(Duration.ofSeconds(10)).until(() -> !listener.lastIds().isEmpty());
      network.set(
          List.of(
              new ProbeMatch("uuid-spoof", List.of(A), List.of()),
              new ProbeMatch("uuid-real", List.of(A), List.of())));
      awaitRounds(3);
      assertThat(listener.lastIds()).containsExactly(A + "-uuid-real");
    }
  }

  @Test
  void nothingIsReportedAfterClose() throws Exception {
    RecordingListener listener = new RecordingListener();
    responsive.add(A);
    network.set(List.of(new ProbeMatch("uuid-a", List.of(A), List.of())));
    OnvifDiscovery d = start(listener);
    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.snapshots().isEmpty());
    d.close();
    d.close();
    int reported = listener.snapshots().size();
    network.set(List.of());
    // Let the scheduler run whatever is queued: a marker task after the interval has passed.
    CountDownLatch marker = new CountDownLatch(1);
    scheduler.schedule(marker::countDown, 100, TimeUnit.MILLISECONDS);
    assertThat(marker.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(listener.snapshots()).hasSize(reported);
    assertThat(listener.last().orElseThrow())
        .extracting(DiscoveredDevice::id)
        .containsExactly(A + "-uuid-a");
  }
}
