package io.jakri.agent.deviceplugin;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Watches the device-plugin directory (inotify) for {@link DevicePluginManager}: the kubelet socket
 * created or deleted, or a lost event, calls for a full check ({@code onEverything}); deleted
 * sockets only for the resources serving on them ({@code onDeleted}, with their file names, run on
 * the control executor). Our own sockets appearing are not news. One watch thread; the watch is
 * (re)created on the control executor, retried after {@code retry} when the directory cannot be
 * watched, and each attempt ends with {@code afterAttempt} there.
 */
final class PluginDirWatch {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);

  private final Path dir;
  private final Executor control;
  private final ScheduledExecutorService scheduler;
  private final Duration retry;
  private final BooleanSupplier closed;
  private final Runnable onEverything;
  private final Consumer<Set<String>> onDeleted;
  private final Runnable afterAttempt;

  // Confined to the control executor.
  private WatchService watcher;

  PluginDirWatch(
      Path dir,
      Executor control,
      ScheduledExecutorService scheduler,
      Duration retry,
      BooleanSupplier closed,
      Runnable onEverything,
      Consumer<Set<String>> onDeleted,
      Runnable afterAttempt) {
    this.dir = dir;
    this.control = control;
    this.scheduler = scheduler;
    this.retry = retry;
    this.closed = closed;
    this.onEverything = onEverything;
    this.onDeleted = onDeleted;
    this.afterAttempt = afterAttempt;
  }

  /** Starts watching (creating the directory when missing). Control executor. */
  void start() {
    try {
      Files.createDirectories(dir);
      watcher = FileSystems.getDefault().newWatchService();
      dir.register(
          watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
      Thread watchThread = new Thread(this::watchLoop, "jakri-deviceplugin-watch");
      watchThread.setDaemon(true);
      watchThread.start();
      LOG.info("watching device-plugin directory {}", dir);
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "device-plugin directory {} cannot be watched ({}); retrying in {}s",
          dir,
          e.toString(),
          retry.toSeconds());
      close();
      scheduler.schedule(
          () -> control.execute(this::start), retry.toMillis(), TimeUnit.MILLISECONDS);
    }
    afterAttempt.run();
  }

  private void watchLoop() {
    WatchService service = watcher;
    while (!closed.getAsBoolean()) {
      WatchKey key;
      try {
        key = service.take();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      boolean everything = false;
      Set<String> deleted = new HashSet<>();
      for (WatchEvent<?> event : key.pollEvents()) {
        // A deleted socket calls only for a check of the resource serving on it: retiring
        // thousands of resources deletes thousands of our own sockets, and a full check per
        // deletion would stat every socket each time.
        String name = String.valueOf(event.context());
        if (event.kind() == StandardWatchEventKinds.OVERFLOW
            || KubeletRegistrar.KUBELET_SOCKET.equals(name)) {
          everything = true;
        } else if (event.kind() == StandardWatchEventKinds.ENTRY_DELETE) {
          deleted.add(name);
        }
      }
      if (everything) {
        onEverything.run();
      } else if (!deleted.isEmpty() && !closed.getAsBoolean()) {
        control.execute(() -> onDeleted.accept(deleted));
      }
      if (!key.reset()) {
        LOG.warn("device-plugin directory {} is no longer watched; re-creating the watch", dir);
        control.execute(this::start);
        return;
      }
    }
  }

  /** Stops watching. Control executor. */
  void close() {
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing watch service: {}", e.toString());
      }
      watcher = null;
    }
  }
}
