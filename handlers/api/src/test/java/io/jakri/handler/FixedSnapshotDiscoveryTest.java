package io.jakri.handler;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class FixedSnapshotDiscoveryTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final List<List<DiscoveredDevice>> snapshots = new CopyOnWriteArrayList<>();
  private final List<String> failures = new CopyOnWriteArrayList<>();
  private final DeviceListener listener =
      new DeviceListener() {
        @Override
        public void devices(List<DiscoveredDevice> devices) {
          snapshots.add(devices);
        }

        @Override
        public void failed(String reason, Throwable cause) {
          failures.add(reason);
        }
      };

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  @Test
  void reportsItsSnapshotOnceOnTheScheduler() {
    DiscoveredDevice device = DiscoveredDevice.of("d", java.util.Map.of(), false);
    FixedSnapshotDiscovery.start(scheduler, () -> List.of(device), listener);
    await().atMost(Duration.ofSeconds(5)).until(() -> snapshots.size() == 1);
    assertThat(snapshots.get(0)).containsExactly(device);
  }

  @Test
  void aSnapshotThatThrowsIsReportedAsAFailure() {
    FixedSnapshotDiscovery.start(
        scheduler,
        () -> {
          throw new IllegalStateException("no devices today");
        },
        listener);
    await().atMost(Duration.ofSeconds(5)).until(() -> failures.size() == 1);
    assertThat(failures.get(0)).contains("no devices today");
    assertThat(snapshots).isEmpty();
  }

  @Test
  void closingFirstMeansNothingIsReportedAndCloseIsIdempotent() throws Exception {
    CountDownLatch busy = new CountDownLatch(1);
    scheduler.execute(
        () -> {
          try {
            busy.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    FixedSnapshotDiscovery discovery = FixedSnapshotDiscovery.start(scheduler, List::of, listener);
    discovery.close();
    discovery.close();
    busy.countDown();
    scheduler.schedule(() -> null, 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);
    assertThat(snapshots).isEmpty();
    assertThat(failures).isEmpty();
  }
}
