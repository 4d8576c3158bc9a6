package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * {@link HandlerReports} on its own: the "discovery thread" is a queue the test runs by hand, the
 * clock a counter.
 */
class HandlerReportsTest {

  private final List<Runnable> queued = new ArrayList<>();
  private final AtomicLong clock = new AtomicLong(100);
  private final AtomicBoolean closed = new AtomicBoolean();
  private final List<String> failures = new ArrayList<>();
  private final HandlerReports reports =
      new HandlerReports(
          queued::add,
          clock::get,
          closed::get,
          () -> {},
          (runId, reason, cause) -> failures.add(runId + " " + reason));

  @Test
  void snapshotsWaitingAreCoalescedIntoTheNewestWithTheOldestReportTime() {
    DeviceListener listener = reports.listener(1);
    listener.devices(List.of(device("a")));
    clock.set(200);
    listener.devices(List.of(device("a"), device("b")));

    assertThat(queued).hasSize(1); // one processing queued for both
    HandlerReports.Pending pending = reports.take().orElseThrow();
    assertThat(pending.runId()).isEqualTo(1);
    assertThat(pending.devices()).extracting(DiscoveredDevice::id).containsExactly("a", "b");
    assertThat(pending.reportedNanos()).isEqualTo(100);
    assertThat(reports.take()).isEmpty();

    // Taken: the next report queues processing again, with its own time.
    listener.devices(List.of());
    assertThat(queued).hasSize(2);
    assertThat(reports.take().orElseThrow().reportedNanos()).isEqualTo(200);
  }

  @Test
  void aSnapshotOfANewRunKeepsItsOwnReportTime() {
    reports.listener(1).devices(List.of(device("a")));
    clock.set(300);
    reports.listener(2).devices(List.of(device("b")));

    HandlerReports.Pending pending = reports.take().orElseThrow();
    assertThat(pending.runId()).isEqualTo(2);
    assertThat(pending.reportedNanos()).isEqualTo(300);
  }

  @Test
  void theReportedListIsCopied() {
    List<DiscoveredDevice> devices = new ArrayList<>(List.of(device("a")));
    reports.listener(1).devices(devices);
    devices.add(device("b"));
    assertThat(reports.take().orElseThrow().devices())
        .extracting(DiscoveredDevice::id)
        .containsExactly("a");
  }

  @Test
  void againProcessesTheLastSnapshotUnlessOneIsWaiting() {
    reports.listener(1).devices(List.of(device("new")));
    reports.again(1, List.of(device("old")));
    assertThat(queued).hasSize(1);
    assertThat(reports.take().orElseThrow().devices())
        .extracting(DiscoveredDevice::id)
        .containsExactly("new");

    clock.set(400);
    reports.again(1, List.of(device("old")));
    assertThat(queued).hasSize(2);
    HandlerReports.Pending again = reports.take().orElseThrow();
    assertThat(again.devices()).extracting(DiscoveredDevice::id).containsExactly("old");
    assertThat(again.reportedNanos()).isEqualTo(400);
  }

  @Test
  void nothingIsTakenFromANullReportOrWhileClosing() {
    reports.listener(1).devices(null);
    closed.set(true);
    reports.listener(1).devices(List.of(device("a")));
    assertThat(queued).isEmpty();
    assertThat(reports.take()).isEmpty();
  }

  @Test
  void aReportedFailureIsHandedToTheDiscoveryThreadWithItsRun() {
    reports.listener(7).failed("lost the bus", null);
    assertThat(failures).isEmpty();
    assertThat(queued).hasSize(1);
    queued.get(0).run();
    assertThat(failures).containsExactly("7 lost the bus");
  }

  private static DiscoveredDevice device(String id) {
    return DiscoveredDevice.of(id, Map.of(), false);
  }
}
