package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.DiscoveryHandler;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * {@link DiscoveryManager} on its own: an in-process handler reports snapshots, a recording sink
 * takes the changes. No agent, store, kubelet or network.
 */
class DiscoveryManagerTest {

  private static final Duration WAIT = Duration.ofSeconds(10);
  private static final Duration GRACE = Duration.ofMillis(300);

  private final FakeHandler handler = new FakeHandler();
  private final RecordingSink sink = new RecordingSink();
  private ScheduledExecutorService scheduler;
  private DiscoveryManager manager;

  @BeforeEach
  void start() {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    manager =
        new DiscoveryManager(
            "node-a",
            new OneHandler(handler),
            PropertyResolver.literalOnly(),
            sink,
            scheduler,
            GRACE,
            System::nanoTime);
  }

  @AfterEach
  void stop() {
    manager.close();
    scheduler.shutdownNow();
  }

  @Test
  void snapshotsBecomeOrderedChangesAndTheGraceEndsOnATimer() {
    manager.apply(List.of(spec("cams")));
    DeviceListener listener = handler.awaitStarted(1);
    listener.devices(List.of(device("a", "1"), device("b", "1")));
    sink.awaitKinds("APPEARED a", "APPEARED b");

    listener.devices(List.of(device("a", "2")));
    sink.awaitKinds("APPEARED a", "APPEARED b", "VANISHED b", "UPDATED a", "REMOVED b");
    // The status counts the devices as of the last snapshot processed.
    listener.devices(List.of(device("a", "2")));
    await()
        .atMost(WAIT)
        .until(
            () ->
                new DiscoveryManager.ConfigurationStatus(
                        DiscoveryManager.State.DISCOVERING, "discovering with handler fake", 1)
                    .equals(manager.statuses().get("cams")));
    assertThat(sink.kinds).hasSize(5);
  }

  @Test
  void aDeviceBackWithinItsGraceReturns() {
    DiscoveryManager slow =
        new DiscoveryManager(
            "node-a",
            new OneHandler(handler),
            PropertyResolver.literalOnly(),
            sink,
            scheduler,
            Duration.ofMinutes(5),
            System::nanoTime);
    try {
      slow.apply(List.of(spec("cams")));
      DeviceListener listener = handler.awaitStarted(1);
      listener.devices(List.of(device("a", "1")));
      sink.awaitKinds("APPEARED a");
      listener.devices(List.of());
      sink.awaitKinds("APPEARED a", "VANISHED a");
      listener.devices(List.of(device("a", "1")));
      sink.awaitKinds("APPEARED a", "VANISHED a", "RETURNED a");
    } finally {
      slow.close();
    }
  }

  @Test
  void aRemovedConfigurationWithdrawsItsDevicesAndStopsItsDiscovery() {
    manager.apply(List.of(spec("cams")));
    handler.awaitStarted(1).devices(List.of(device("a", "1")));
    sink.awaitKinds("APPEARED a");
    manager.apply(List.of());
    sink.awaitKinds("APPEARED a", "WITHDRAWN a");
    await().atMost(WAIT).until(() -> handler.closed.get() == 1);
    assertThat(manager.statuses()).doesNotContainKey("cams");
  }

  @Test
  void aFailedInstanceWriteIsRetriedFromTheLastSnapshot() {
    sink.failWrites.set(1);
    manager.apply(List.of(spec("cams")));
    handler.awaitStarted(1).devices(List.of(device("a", "1")));
    // The first write fails; the device is dropped and appears again after the backoff.
    sink.awaitKinds("APPEARED a (failed)", "APPEARED a");
  }

  @Test
  void onlyInstancesNoDiscoveryReportsAreReleased() {
    manager.apply(List.of(spec("cams")));
    handler.awaitStarted(1).devices(List.of(device("a", "1")));
    sink.awaitKinds("APPEARED a");
    String known = sink.changes.get(0).instanceName();
    manager.releaseUnknown(List.of(known, "cams-leftover"));
    await()
        .atMost(WAIT)
        .until(() -> sink.changes.stream().anyMatch(c -> c instanceof DeviceChange.Released));
    assertThat(sink.changes)
        .filteredOn(c -> c instanceof DeviceChange.Released)
        .extracting(DeviceChange::instanceName)
        .containsExactly("cams-leftover");
  }

  @Test
  void aHandlerReportingFailureIsRestarted() {
    manager.apply(List.of(spec("cams")));
    handler.awaitStarted(1).failed("lost the bus", null);
    await()
        .atMost(WAIT)
        .until(() -> manager.statuses().get("cams").state() == DiscoveryManager.State.FAILED);
    assertThat(manager.statuses().get("cams").message())
        .startsWith("handler fake reported failure: lost the bus; restarting in");
    handler.awaitStarted(2).devices(List.of(device("a", "1")));
    sink.awaitKinds("APPEARED a");
    assertThat(manager.statuses().get("cams").state())
        .isEqualTo(DiscoveryManager.State.DISCOVERING);
  }

  @Test
  void aChangedSpecRewritesTheDevicesInPlace() {
    manager.apply(List.of(spec("cams")));
    handler.awaitStarted(1).devices(List.of(device("a", "1")));
    sink.awaitKinds("APPEARED a");
    ConfigurationSpec twice =
        new ConfigurationSpec("cams", "fake", "", List.of(), 2, Map.of(), Optional.empty());
    manager.apply(List.of(twice));
    sink.awaitKinds("APPEARED a", "REWRITTEN a");
    DeviceChange.Rewritten rewritten = (DeviceChange.Rewritten) sink.changes.get(1);
    assertThat(rewritten.device().configuration().capacity()).isEqualTo(2);
    // Capacity and brokerProperties do not restart the discovery.
    assertThat(handler.started.get()).isEqualTo(1);
  }

  @Test
  void whatTheHandlersDoIsReportedAsEventsOnTheDiscoveryThread() {
    List<DiscoveryReport> events = new CopyOnWriteArrayList<>();
    List<String> threads = new CopyOnWriteArrayList<>();
    DiscoveryManager reporting =
        new DiscoveryManager(
            "node-a",
            new OneHandler(handler),
            PropertyResolver.literalOnly(),
            sink,
            scheduler,
            GRACE,
            System::nanoTime,
            ClassPolicy.defaults(),
            false,
            io.jakri.agent.model.ContainerPaths.DEFAULT,
            SlotLimits.defaults(),
            HandlerLimits.defaults(),
            e -> {
              events.add(e);
              threads.add(Thread.currentThread().getName());
            });
    try {
      reporting.apply(List.of(spec("cams")));
      handler.awaitStarted(1).devices(List.of(device("a", "1")));
      sink.awaitKinds("APPEARED a");
      await()
          .atMost(WAIT)
          .until(() -> events.stream().anyMatch(e -> e instanceof DiscoveryReport.FirstResults));
      assertThat(events)
          .contains(
              new DiscoveryReport.DiscoveryStarted("fake", "cams"),
              new DiscoveryReport.Snapshot("fake"),
              new DiscoveryReport.StatusChanged("cams"));
      reporting.apply(List.of());
      await().atMost(WAIT).until(() -> reporting.statuses().isEmpty());
      await()
          .atMost(WAIT)
          .until(
              () ->
                  events.get(events.size() - 1).equals(new DiscoveryReport.StatusChanged("cams")));
      assertThat(threads).allMatch(t -> t.startsWith("jakri-discovery-"));
    } finally {
      reporting.close();
    }
  }

  // ---- helpers ----

  private static ConfigurationSpec spec(String name) {
    return new ConfigurationSpec(name, "fake", "", List.of(), 1, Map.of(), Optional.empty());
  }

  private static DiscoveredDevice device(String id, String version) {
    return DiscoveredDevice.of(id, Map.of("VERSION", version), false);
  }

  /** Records every change; fails the first {@link #failWrites} Instance writes. */
  private static final class RecordingSink implements DeviceSink {
    final List<DeviceChange> changes = new CopyOnWriteArrayList<>();
    final List<String> kinds = new CopyOnWriteArrayList<>();
    final AtomicInteger failWrites = new AtomicInteger();

    @Override
    public void accept(DeviceChange change, long reportedNanos) throws StoreException {
      String id = change instanceof DeviceChange.OfDevice d ? d.device().device().id() : "?";
      if (change.kind().writesInstance() && failWrites.getAndDecrement() > 0) {
        kinds.add(change.kind() + " " + id + " (failed)");
        throw new StoreException.Unavailable("store down", null);
      }
      changes.add(change);
      kinds.add(change.kind() + " " + id);
    }

    void awaitKinds(String... expected) {
      await().atMost(WAIT).until(() -> kinds.size() >= expected.length);
      assertThat(kinds).containsExactly(expected);
    }
  }

  private record OneHandler(DiscoveryHandler handler) implements HandlerRegistry {
    @Override
    public Optional<DiscoveryHandler> find(String name) {
      return Optional.of(handler).filter(h -> h.name().equals(name));
    }

    @Override
    public Set<String> names() {
      return Set.of(handler.name());
    }

    @Override
    public void addListener(Runnable onChange) {}
  }
}
