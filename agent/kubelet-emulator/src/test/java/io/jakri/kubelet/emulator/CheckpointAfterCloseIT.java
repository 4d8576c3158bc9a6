package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.FakeDevicePlugin.healthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Once close() has returned the emulator leaves its directory alone (SECURITY.md, known gap). */
class CheckpointAfterCloseIT {
  private static final String RESOURCE = "akri.sh/udev-video";

  @TempDir Path tmp;
  private final CountDownLatch entered = new CountDownLatch(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private EmulatorFixture fx;

  @AfterEach
  void tearDown() {
    release.countDown();
    fx.close();
  }

  @Test
  void aCheckpointQueuedBehindASlowListenerIsNotWrittenAfterClose() throws Exception {
    fx = new EmulatorFixture(tmp);
    KubeletEmulator emulator = fx.start();
    AtomicBoolean first = new AtomicBoolean(true);
    // The snapshot event is queued before the checkpoint write of the same snapshot, so holding
    // the listener holds that write back until after close().
    emulator.addListener(
        new EmulatorListener() {
          @Override
          public void snapshot(String resource, Map<String, String> devices) {
            if (first.getAndSet(false)) {
              entered.countDown();
              try {
                release.await(30, TimeUnit.SECONDS);
              } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
              }
            }
          }
        });
    fx.plugin("video.sock", RESOURCE, options(false, false), healthy("a"))
        .register(emulator.kubeletSocket());
    assertThat(entered.await(10, TimeUnit.SECONDS)).as("snapshot listener entered").isTrue();

    emulator.close();
    Path checkpoint = fx.dir.resolve(KubeletEmulator.CHECKPOINT_FILE);
    Files.deleteIfExists(checkpoint);
    release.countDown();

    await()
        .during(Duration.ofMillis(500))
        .atMost(Duration.ofSeconds(3))
        .until(() -> Files.notExists(checkpoint));
  }
}
