package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.jakri.agent.LogCapture;
import io.jakri.agent.discovery.DiscoveryManager.ConfigurationStatus;
import io.jakri.agent.discovery.DiscoveryManager.State;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.logging.LogText;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One {@link ConfigurationRun} on its own: a real discovery thread, feed and handler threads, an
 * in-process handler, a sink and an event list recording what comes out. No manager, agent or
 * network.
 */
class ConfigurationRunTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  private final ExecutorService loop = Executors.newSingleThreadExecutor();
  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
  private final HandlerThreads threads =
      new HandlerThreads(scheduler, HandlerLimits.defaults(), () -> {});
  private final List<DiscoveryReport> events = new CopyOnWriteArrayList<>();
  private final List<String> changes = new CopyOnWriteArrayList<>();
  private final ConfigurationStatuses statuses =
      new ConfigurationStatuses(c -> events.add(new DiscoveryReport.StatusChanged(c)));
  private final FakeHandler fake = new FakeHandler();
  private final List<DeviceListener> listeners = fake.listeners;
  private final AtomicInteger closes = fake.closed;

  @AfterEach
  void stop() {
    loop.shutdownNow();
    threads.close();
    scheduler.shutdownNow();
  }

  @Test
  void restartsBackOffFromOneSecondToOneMinute() {
    assertThat(
            List.of(0, 1, 2, 5, 6, 7, 100).stream()
                .map(ConfigurationRun::restartDelayMillis)
                .toList())
        .containsExactly(1_000L, 2_000L, 4_000L, 32_000L, 60_000L, 60_000L, 60_000L);
  }

  @Test
  void aMissingHandlerIsReportedAndNothingStarts() throws Exception {
    ConfigurationRun run = run(spec(Map.of()), Set.of());
    onLoop(run::start);
    assertThat(statuses.all())
        .containsEntry(
            "cams",
            new ConfigurationStatus(
                State.HANDLER_MISSING,
                "discovery handler \"fake\" is not installed (installed: []); waiting for it",
                0));
    assertThat(run.active()).isFalse();
    assertThat(events).containsExactly(new DiscoveryReport.StatusChanged("cams"));
  }

  /**
   * A flood of external-handler registrations (238 names, each start sees one more): the waiting
   * Configuration's status names the first few installed handlers and how many more, and the flood
   * is one ERROR line of bounded length, not one line per registration listing every name.
   */
  @Test
  void aFloodOfRegistrationsIsOneBoundedLineForAWaitingConfiguration() throws Exception {
    Set<DiscoveryHandler> installed = new java.util.concurrent.CopyOnWriteArraySet<>();
    ConfigurationRun run = run(spec(Map.of()), installed);
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      for (int i = 0; i < 238; i++) {
        installed.add(new Named(String.format("akri-handler-%03d", i)));
        onLoop(run::start);
      }
      assertThat(logs.events())
          .filteredOn(e -> e.getLevel().isGreaterOrEqual(Level.WARN))
          .hasSize(1)
          .allMatch(e -> e.getThrowableProxy() == null);
      assertThat(logs.messages()).allMatch(m -> m.length() <= LogText.MAX_LINE);
    }
    assertThat(statuses.message("cams"))
        .isEqualTo(
            "discovery handler \"fake\" is not installed (installed: [akri-handler-000,"
                + " akri-handler-001, akri-handler-002, akri-handler-003, akri-handler-004 ... and"
                + " 233 more]); waiting for it");
  }

  /** A handler that is only a name. */
  private record Named(String name) implements DiscoveryHandler {
    @Override
    public io.jakri.handler.Validation validate(io.jakri.handler.DiscoveryContext context) {
      return io.jakri.handler.Validation.ok();
    }

    @Override
    public io.jakri.handler.Discovery start(
        io.jakri.handler.DiscoveryContext context, DeviceListener listener) {
      return () -> {};
    }
  }

  @Test
  void reservedBrokerPropertiesAreRefusedOnceWhileTheyStay() throws Exception {
    ConfigurationRun run = run(spec(Map.of("PATH", "/opt")), Set.of(handler()));
    onLoop(run::start);
    onLoop(run::start);
    assertThat(statuses.all().get("cams").state()).isEqualTo(State.INVALID);
    assertThat(events)
        .containsExactly(
            new DiscoveryReport.Refused(Refusal.RESERVED_ENV),
            new DiscoveryReport.StatusChanged("cams"));
    assertThat(listeners).isEmpty();
  }

  @Test
  void aStartedDiscoveryReportsAndIsRestartedAfterItFailed() throws Exception {
    ConfigurationRun run = run(spec(Map.of()), Set.of(handler()));
    onLoop(run::start);
    await().atMost(WAIT).until(() -> listeners.size() == 1);
    await()
        .atMost(WAIT)
        .until(() -> events.contains(new DiscoveryReport.DiscoveryStarted("fake", "cams")));
    assertThat(statuses.all().get("cams"))
        .isEqualTo(new ConfigurationStatus(State.DISCOVERING, "discovering with handler fake", 0));

    listeners.get(0).devices(List.of(DiscoveredDevice.of("a", Map.of(), false)));
    await().atMost(WAIT).until(() -> changes.equals(List.of("APPEARED")));
    await()
        .atMost(WAIT)
        .until(() -> events.stream().anyMatch(e -> e instanceof DiscoveryReport.FirstResults));
    assertThat(events).contains(new DiscoveryReport.Snapshot("fake"));
    await().atMost(WAIT).until(() -> statuses.all().get("cams").devices() == 1);

    listeners.get(0).failed("lost the bus", null);
    await()
        .atMost(WAIT)
        .until(
            () ->
                events.contains(
                    new DiscoveryReport.HandlerFailed("fake", HandlerFailure.REPORTED_FAILURE)));
    await().atMost(WAIT).until(() -> closes.get() == 1);
    await()
        .atMost(WAIT)
        .until(
            () ->
                statuses
                    .all()
                    .get("cams")
                    .equals(
                        new ConfigurationStatus(
                            State.FAILED,
                            "handler fake reported failure: lost the bus; restarting in 1000 ms",
                            1)));
    // Restarted after the first backoff; the devices stayed meanwhile.
    await().atMost(WAIT).until(() -> listeners.size() == 2);
    await().atMost(WAIT).until(() -> statuses.all().get("cams").state() == State.DISCOVERING);
    assertThat(changes).containsExactly("APPEARED");
  }

  @Test
  void aRemovedRunWithdrawsItsDevicesAndIgnoresLateReports() throws Exception {
    ConfigurationRun run = run(spec(Map.of()), Set.of(handler()));
    onLoop(run::start);
    await().atMost(WAIT).until(() -> listeners.size() == 1);
    await().atMost(WAIT).until(run::active);
    listeners.get(0).devices(List.of(DiscoveredDevice.of("a", Map.of(), false)));
    await().atMost(WAIT).until(() -> changes.equals(List.of("APPEARED")));

    onLoop(run::remove);
    await().atMost(WAIT).until(() -> closes.get() == 1);
    assertThat(changes).containsExactly("APPEARED", "WITHDRAWN");
    listeners.get(0).devices(List.of(DiscoveredDevice.of("b", Map.of(), false)));
    listeners.get(0).failed("late", null);
    onLoop(() -> {}); // the late reports were queued before this
    assertThat(changes).containsExactly("APPEARED", "WITHDRAWN");
    assertThat(events).noneMatch(e -> e instanceof DiscoveryReport.HandlerFailed);
  }

  // ---- helpers ----

  private ConfigurationRun run(ConfigurationSpec spec, Set<DiscoveryHandler> installed)
      throws Exception {
    DeviceFeed feed =
        new DeviceFeed(
            (change, reportedNanos) -> changes.add(change.kind().name()),
            loop,
            scheduler,
            System::nanoTime,
            Duration.ofMinutes(5),
            () -> false);
    DeviceTable.Rules rules =
        new DeviceTable.Rules(
            "node-a", Duration.ofMinutes(5), ClassPolicy.defaults(), SlotLimits.defaults(), false);
    ConfigurationRun.Shared shared =
        new ConfigurationRun.Shared(
            "node-a",
            new Installed(installed),
            PropertyResolver.literalOnly(),
            rules,
            feed,
            new HandlerCalls(threads),
            scheduler,
            loop,
            statuses,
            events::add,
            System::nanoTime,
            () -> false,
            r -> DeviceTable.Neighbours.NONE);
    return loop.submit(() -> new ConfigurationRun(spec, shared)).get(10, TimeUnit.SECONDS);
  }

  /** Runs {@code task} on the discovery thread and waits for it. */
  private void onLoop(Runnable task) throws Exception {
    loop.submit(task).get(10, TimeUnit.SECONDS);
  }

  private static ConfigurationSpec spec(Map<String, String> brokerProperties) {
    return new ConfigurationSpec(
        "cams", "fake", "", List.of(), 1, brokerProperties, Optional.empty());
  }

  private DiscoveryHandler handler() {
    return fake;
  }

  private record Installed(Set<DiscoveryHandler> handlers) implements HandlerRegistry {
    @Override
    public Optional<DiscoveryHandler> find(String name) {
      return handlers.stream().filter(h -> h.name().equals(name)).findFirst();
    }

    @Override
    public Set<String> names() {
      return new java.util.TreeSet<>(handlers.stream().map(DiscoveryHandler::name).toList());
    }

    @Override
    public void addListener(Runnable onChange) {}
  }
}
