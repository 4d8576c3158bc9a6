package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.LogCapture;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link PluginsWatch} on its own, on a temporary directory. */
class PluginsWatchTest {

  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path dir;

  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
  private final List<String> rescans = new CopyOnWriteArrayList<>();
  private PluginsWatch watch;

  @AfterEach
  void stop() {
    if (watch != null) {
      watch.close();
    }
    scheduler.shutdownNow();
  }

  @Test
  void aBurstOfRequestsRescansOnceOnTheRescanThread() {
    watch = new PluginsWatch(dir, () -> rescans.add(Thread.currentThread().getName()), scheduler);
    for (int i = 0; i < 5; i++) {
      watch.requestRescan();
    }
    await().atMost(WAIT).until(() -> rescans.size() == 1);
    await()
        .during(PluginsWatch.DEBOUNCE.multipliedBy(2))
        .atMost(WAIT)
        .until(() -> rescans.size() == 1);
    assertThat(rescans).containsExactly("jakri-plugins-load");
  }

  @Test
  void aJarWrittenIntoTheDirectoryAsksForARescan() throws Exception {
    Path plugins = dir.resolve("plugins"); // created by start()
    watch = new PluginsWatch(plugins, () -> rescans.add("rescan"), scheduler);
    assertThat(watch.start()).isTrue();
    assertThat(plugins).isDirectory();
    Files.writeString(plugins.resolve("handler.jar"), "not really a jar");
    await().atMost(WAIT).until(() -> !rescans.isEmpty());
  }

  @Test
  void aFailingRescanIsLoggedAndLaterOnesStillRun() {
    watch =
        new PluginsWatch(
            dir,
            () -> {
              rescans.add("rescan");
              if (rescans.size() == 1) {
                throw new IllegalStateException("broken jar");
              }
            },
            scheduler);
    try (LogCapture logs = LogCapture.of(PluginHandlerRegistry.class)) {
      watch.requestRescan();
      await()
          .atMost(WAIT)
          .until(
              () ->
                  logs.messages()
                      .contains(
                          "rescanning plugins failed: java.lang.IllegalStateException: broken jar"));
    }
    watch.requestRescan();
    await().atMost(WAIT).until(() -> rescans.size() == 2);
  }

  @Test
  void noRescanRunsAfterClose() {
    watch = new PluginsWatch(dir, () -> rescans.add("rescan"), scheduler);
    watch.requestRescan();
    watch.close();
    watch.requestRescan();
    await().during(PluginsWatch.DEBOUNCE.multipliedBy(2)).atMost(WAIT).until(rescans::isEmpty);
  }
}
