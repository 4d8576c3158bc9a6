package io.jakri.handler.udev;

import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.DirectoryStream;
import java.nio.file.FileStore;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Tells subscribers when device nodes come or go: an inotify watch (through {@link WatchService})
 * on the {@code /dev} tree (devtmpfs reports node creation and removal; sysfs reports nothing) and
 * on the udev database directory when it exists. Directories of other file systems mounted under
 * {@code /dev} ({@code pts}, {@code shm}, {@code mqueue}) and symbolic links are not watched.
 *
 * <p>Threads: one daemon thread, {@code jakri-udev-watch}, per handler instance (all Configurations
 * share it; see {@link UdevHandler}), blocked in {@link WatchService#take()} and calling
 * subscribers, which must return at once (they only schedule a scan). The JDK's watch service adds
 * its own poller thread. {@link #close()} stops both.
 */
final class DevWatcher implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DevWatcher.class);
  static final String THREAD_NAME = "jakri-udev-watch";

  private final WatchService watch;
  private final Path devRoot;
  private final Optional<FileStore> devStore;
  private final List<Runnable> subscribers = new CopyOnWriteArrayList<>();
  private final Thread thread;

  private DevWatcher(WatchService watch, Path devRoot, Optional<FileStore> devStore) {
    this.watch = watch;
    this.devRoot = devRoot;
    this.devStore = devStore;
    this.thread = new Thread(this::run, THREAD_NAME);
    this.thread.setDaemon(true);
  }

  /** Watches {@code devRoot} (recursively) and {@code udevData} if it is a directory. */
  static DevWatcher start(Path devRoot, Path udevData) throws IOException {
    WatchService watch = devRoot.getFileSystem().newWatchService();
    try {
      Optional<FileStore> store = Optional.of(Files.getFileStore(devRoot));
      DevWatcher watcher = new DevWatcher(watch, devRoot, store);
      watcher.registerTree(devRoot);
      if (Files.isDirectory(udevData)) {
        register(watch, udevData);
      }
      watcher.thread.start();
      return watcher;
    } catch (IOException | RuntimeException e) {
      watch.close();
      throw e;
    }
  }

  void subscribe(Runnable onChange) {
    subscribers.add(onChange);
  }

  void unsubscribe(Runnable onChange) {
    subscribers.remove(onChange);
  }

  boolean idle() {
    return subscribers.isEmpty();
  }

  /**
   * Creations and removals only: every write to a device node opened through {@code /dev} (each
   * {@code > /dev/null}) is a modification event, which would rescan for nothing. udevd replaces
   * its database files by renaming, which arrives as a creation.
   */
  private static void register(WatchService watch, Path dir) throws IOException {
    dir.register(watch, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
  }

  private void registerTree(Path dir) {
    try {
      if (!Files.isDirectory(dir, LinkOption.NOFOLLOW_LINKS)) {
        return;
      }
      if (devStore.isPresent() && !devStore.get().equals(Files.getFileStore(dir))) {
        return;
      }
      register(watch, dir);
      try (DirectoryStream<Path> children = Files.newDirectoryStream(dir)) {
        for (Path child : children) {
          if (Files.isDirectory(child, LinkOption.NOFOLLOW_LINKS)) {
            registerTree(child);
          }
        }
      }
    } catch (IOException | RuntimeException e) {
      LOG.debug("udev: not watching {}: {}", dir, e.toString());
    }
  }

  private void run() {
    while (true) {
      WatchKey key;
      try {
        key = watch.take();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      Path dir = (Path) key.watchable();
      for (WatchEvent<?> event : key.pollEvents()) {
        if (event.kind() == StandardWatchEventKinds.ENTRY_CREATE
            && event.context() instanceof Path name
            && dir.startsWith(devRoot)) {
          registerTree(dir.resolve(name));
        }
      }
      key.reset();
      for (Runnable subscriber : subscribers) {
        try {
          subscriber.run();
        } catch (RuntimeException e) {
          LOG.warn("udev: change subscriber failed: {}", e.toString());
        }
      }
    }
  }

  @Override
  public void close() {
    try {
      watch.close();
    } catch (IOException e) {
      LOG.debug("udev: closing the watch service: {}", e.toString());
    }
    thread.interrupt();
  }
}
