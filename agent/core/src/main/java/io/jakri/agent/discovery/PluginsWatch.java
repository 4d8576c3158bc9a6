package io.jakri.agent.discovery;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches a plugins directory and asks for a rescan when jars appear, change or vanish. Events are
 * debounced on the agent's scheduler (a burst of them, such as a jar being written, asks for one
 * rescan {@link #DEBOUNCE} after the last); the rescans run on a thread of their own ({@code
 * jakri-plugins-load}), never on the agent's scheduler; the directory is watched on another ({@code
 * jakri-plugins-watch}).
 */
final class PluginsWatch implements AutoCloseable {

  // Logged as the registry's own lines.
  private static final Logger LOG = LoggerFactory.getLogger(PluginHandlerRegistry.class);

  static final Duration DEBOUNCE = Duration.ofMillis(250);

  private final Path pluginsDir;
  private final Runnable rescan;
  private final ScheduledExecutorService scheduler;
  // Runs the rescans the watcher asks for; the agent's scheduler only times the debounce.
  private final ExecutorService rescans =
      Executors.newSingleThreadExecutor(
          r -> {
            Thread t = new Thread(r, "jakri-plugins-load");
            t.setDaemon(true);
            return t;
          });
  private final Object debounceLock = new Object();
  private ScheduledFuture<?> pendingRescan;
  private WatchService watcher;

  /**
   * @param rescan run on the rescan thread; a failure is logged
   * @param scheduler times the debounce
   */
  PluginsWatch(Path pluginsDir, Runnable rescan, ScheduledExecutorService scheduler) {
    this.pluginsDir = pluginsDir;
    this.rescan = rescan;
    this.scheduler = scheduler;
  }

  /**
   * Starts watching (creating the directory if needed). Returns false, after logging why, when the
   * directory cannot be watched.
   */
  synchronized boolean start() {
    try {
      Files.createDirectories(pluginsDir);
      watcher = FileSystems.getDefault().newWatchService();
      pluginsDir.register(
          watcher,
          StandardWatchEventKinds.ENTRY_CREATE,
          StandardWatchEventKinds.ENTRY_DELETE,
          StandardWatchEventKinds.ENTRY_MODIFY);
    } catch (IOException e) {
      LOG.error("plugins directory {} cannot be watched: {}", pluginsDir, e.toString());
      return false;
    }
    WatchService service = watcher;
    Thread thread =
        new Thread(
            () -> {
              while (true) {
                WatchKey key;
                try {
                  key = service.take();
                } catch (InterruptedException | ClosedWatchServiceException e) {
                  return;
                }
                boolean jars =
                    key.pollEvents().stream()
                        .anyMatch(
                            ev ->
                                ev.kind() == StandardWatchEventKinds.OVERFLOW
                                    || String.valueOf(ev.context()).endsWith(".jar"));
                key.reset();
                if (jars) {
                  requestRescan();
                }
              }
            },
            "jakri-plugins-watch");
    thread.setDaemon(true);
    thread.start();
    return true;
  }

  /** Asks for a rescan {@link #DEBOUNCE} from now, replacing one asked for and not started yet. */
  void requestRescan() {
    synchronized (debounceLock) {
      if (pendingRescan != null) {
        pendingRescan.cancel(false);
      }
      pendingRescan =
          scheduler.schedule(
              () -> {
                try {
                  rescans.execute(this::rescanSafely);
                } catch (RejectedExecutionException e) {
                  // closed
                }
              },
              DEBOUNCE.toMillis(),
              TimeUnit.MILLISECONDS);
    }
  }

  private void rescanSafely() {
    try {
      rescan.run();
    } catch (RuntimeException e) {
      LOG.error("rescanning plugins failed: {}", e.toString());
    }
  }

  /** Stops watching; a rescan asked for is dropped, one running is interrupted. */
  @Override
  public synchronized void close() {
    synchronized (debounceLock) {
      if (pendingRescan != null) {
        pendingRescan.cancel(false);
      }
    }
    rescans.shutdownNow();
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing plugins watcher: {}", e.toString());
      }
    }
  }
}
