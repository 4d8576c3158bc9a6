package io.jakri.handler.udev;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.testkit.RecordingListener;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class UdevDiscoveryTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();

  @AfterEach
  void stop() {
    scheduler.shutdownNow();
  }

  private static DiscoveredDevice device(String id) {
    return DiscoveredDevice.of(id, Map.of("UDEV_DEVPATH", id), false);
  }

  /** Changes whose subscriber the test calls by hand. */
  private static final class ManualChanges implements UdevDiscovery.Changes {
    final AtomicReference<Runnable> subscriber = new AtomicReference<>();
    final AtomicInteger closed = new AtomicInteger();

    @Override
    public AutoCloseable subscribe(Runnable onChange) {
      subscriber.set(onChange);
      return closed::incrementAndGet;
    }
  }

  @Test
  void reportsAtStartAndOnChangeOnlyWhenTheDevicesDiffer() {
    AtomicReference<List<DiscoveredDevice>> now = new AtomicReference<>(List.of(device("/a")));
    AtomicInteger scans = new AtomicInteger();
    RecordingListener listener = new RecordingListener();
    ManualChanges changes = new ManualChanges();
    UdevDiscovery d =
        new UdevDiscovery(
            "c",
            () -> {
              scans.incrementAndGet();
              return now.get();
            },
            listener,
            scheduler,
            Duration.ofHours(1),
            changes);
    d.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 1);

    now.set(List.of(device("/a"), device("/b")));
    changes.subscriber.get().run();
    await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 2);
    assertThat(listener.lastIds()).containsExactly("/a", "/b");
    // The follow-up scans after the event find nothing new: no further snapshot.
    await().atMost(Duration.ofSeconds(5)).until(() -> scans.get() >= 4);
    assertThat(listener.snapshots()).hasSize(2);

    d.close();
    d.close();
    assertThat(changes.closed.get()).isEqualTo(1);
  }

  @Test
  void nothingIsReportedAfterClose() throws Exception {
    CountDownLatch parked = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    scheduler.execute(
        () -> {
          parked.countDown();
          try {
            release.await(10, TimeUnit.SECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    parked.await();
    RecordingListener listener = new RecordingListener();
    AtomicInteger scans = new AtomicInteger();
    UdevDiscovery d =
        new UdevDiscovery(
            "c",
            () -> {
              scans.incrementAndGet();
              return List.of(device("/a"));
            },
            listener,
            scheduler,
            Duration.ofMillis(10),
            new ManualChanges());
    d.start();
    assertThat(listener.snapshots()).isEmpty();
    d.close();
    release.countDown();
    // A marker task queued after everything the discovery had scheduled.
    CountDownLatch drained = new CountDownLatch(1);
    scheduler.execute(drained::countDown);
    assertThat(drained.await(5, TimeUnit.SECONDS)).isTrue();
    assertThat(listener.snapshots()).isEmpty();
    assertThat(scans.get()).isZero();
  }

  @Test
  void aFailingScanKeepsTheLastDevicesAndTheDiscoveryRunning() {
    AtomicInteger calls = new AtomicInteger();
    RecordingListener listener = new RecordingListener();
    ManualChanges changes = new ManualChanges();
    UdevDiscovery d =
        new UdevDiscovery(
            "c",
            () -> {
              int n = calls.incrementAndGet();
              if (n == 2) {
                throw new IllegalStateException("sysfs hiccup");
              }
              return n == 1 ? List.of(device("/a")) : List.of();
            },
            listener,
            scheduler,
            Duration.ofHours(1),
            changes);
    d.start();
    await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 1);
    changes.subscriber.get().run();
    await().atMost(Duration.ofSeconds(5)).until(() -> listener.snapshots().size() == 2);
    assertThat(listener.lastIds()).isEmpty();
    assertThat(listener.failures()).isEmpty();
    d.close();
  }

  @Test
  void watcherReportsFilesAndDirectoriesCreatedLaterBelowTheRoot(@TempDir Path dev)
      throws Exception {
    AtomicInteger events = new AtomicInteger();
    try (DevWatcher w = DevWatcher.start(dev, dev.resolve("no-udev-data"))) {
      w.subscribe(events::incrementAndGet);
      Files.createDirectories(dev.resolve("bus"));
      await().atMost(Duration.ofSeconds(10)).until(() -> events.get() >= 1);
      // The new directory is watched too: nodes created inside it are reported (a file made
      // before the watcher registered the directory is not, so keep adding until one is).
      int afterDirectory = events.get();
      AtomicInteger n = new AtomicInteger();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(Duration.ofMillis(50))
          .until(
              () -> {
                Files.createFile(dev.resolve("bus").resolve("node-" + n.incrementAndGet()));
                return events.get() > afterDirectory;
              });
      assertThat(Thread.getAllStackTraces().keySet())
          .extracting(Thread::getName)
          .contains(DevWatcher.THREAD_NAME);
    }
  }
}
