package io.jakri.agent.configuration;

import io.jakri.agent.model.ConfigurationSpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;
import java.util.stream.Stream;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Standalone mode's source of Configurations: one YAML file, or every {@code *.yaml}/{@code *.yml}
 * in a directory, re-read when they change (inotify, debounced). A file that stops parsing keeps
 * its last good Configurations and gets one error line per problem; a deleted file takes its
 * Configurations with it. Two files defining the same name: the first (by path) wins.
 */
public final class ConfigurationFiles implements ConfigurationSource {

  private static final Logger LOG = LoggerFactory.getLogger(ConfigurationFiles.class);
  private static final long DEBOUNCE_MS = 100;

  private final Path path;
  private final ScheduledExecutorService scheduler;
  private final Consumer<List<ConfigurationSpec>> sink;
  private final ConfigurationParser parser = new ConfigurationParser();
  private final Map<Path, List<ConfigurationSpec>> lastGood = new HashMap<>();
  private final Map<Path, String> lastText = new HashMap<>();
  // Errors that stand until their file changes (unreadable, a name defined twice): logged once,
  // again only when the error changes or comes back after going away.
  private Map<String, String> standing = new HashMap<>();
  private Map<String, String> nowStanding = new HashMap<>();
  private WatchService watcher;
  private Thread thread;
  private ScheduledFuture<?> pending;
  private volatile boolean closed;

  public ConfigurationFiles(
      Path path, ScheduledExecutorService scheduler, Consumer<List<ConfigurationSpec>> sink) {
    this.path = path.toAbsolutePath().normalize();
    this.scheduler = scheduler;
    this.sink = sink;
  }

  /** Reads everything once, hands it to the sink, then watches for changes. */
  @Override
  public synchronized void start() throws IOException {
    Path dir = Files.isDirectory(path) ? path : path.getParent();
    if (!Files.exists(path)) {
      LOG.error("configuration path {} does not exist; waiting for it to appear", path);
    }
    watcher = FileSystems.getDefault().newWatchService();
    dir.register(
        watcher,
        StandardWatchEventKinds.ENTRY_CREATE,
        StandardWatchEventKinds.ENTRY_MODIFY,
        StandardWatchEventKinds.ENTRY_DELETE);
    thread = new Thread(this::watchLoop, "jakri-config-watch");
    thread.setDaemon(true);
    thread.start();
    reload();
  }

  private void watchLoop() {
    while (!closed) {
      WatchKey key;
      try {
        key = watcher.take();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      key.pollEvents();
      key.reset();
      schedule();
    }
  }

  private synchronized void schedule() {
    if (pending != null) {
      pending.cancel(false);
    }
    pending = scheduler.schedule(this::reloadSafely, DEBOUNCE_MS, TimeUnit.MILLISECONDS);
  }

  private void reloadSafely() {
    try {
      reload();
    } catch (RuntimeException e) {
      LOG.error("reading configurations from {} failed: {}", path, e.toString());
    }
  }

  /** Re-reads every file and hands the complete set of Configurations to the sink. */
  public synchronized void reload() {
    nowStanding = new HashMap<>();
    List<Path> files = files();
    lastGood.keySet().retainAll(files);
    lastText.keySet().retainAll(files);
    for (Path file : files) {
      String text;
      try {
        text = Files.readString(file, StandardCharsets.UTF_8);
      } catch (IOException e) {
        standingError(file + " read", file + ": cannot be read: " + e);
        lastText.remove(file);
        continue;
      }
      if (text.equals(lastText.get(file))) {
        continue;
      }
      lastText.put(file, text);
      ConfigurationParser.Result result = parser.parse(file.toString(), text);
      result.warnings().forEach(w -> LOG.warn("{}", w));
      if (result.ok()) {
        lastGood.put(file, result.configurations());
      } else {
        result.errors().forEach(e -> LOG.error("{}", e));
        if (lastGood.containsKey(file)) {
          LOG.error("{}: keeping its last valid configurations until it is fixed", file);
        }
      }
    }
    Map<String, ConfigurationSpec> all = new LinkedHashMap<>();
    Map<String, Path> origin = new HashMap<>();
    for (Path file : files) {
      for (ConfigurationSpec spec : lastGood.getOrDefault(file, List.of())) {
        Path first = origin.putIfAbsent(spec.name(), file);
        if (first != null) {
          standingError(
              file + " name " + spec.name(),
              file
                  + ": configuration "
                  + spec.name()
                  + " is already defined in "
                  + first
                  + "; ignored");
        } else {
          all.put(spec.name(), spec);
        }
      }
    }
    standing = nowStanding;
    sink.accept(new ArrayList<>(all.values()));
  }

  /** Logs an error that stands until its cause changes, once per {@code key} and message. */
  private void standingError(String key, String message) {
    nowStanding.put(key, message);
    if (!message.equals(standing.get(key))) {
      LOG.error("{}", message);
    }
  }

  private List<Path> files() {
    if (Files.isRegularFile(path)) {
      return List.of(path);
    }
    if (!Files.isDirectory(path)) {
      return List.of();
    }
    try (Stream<Path> listing = Files.list(path)) {
      return listing
          .filter(Files::isRegularFile)
          .filter(
              p -> {
                String n = p.getFileName().toString();
                return (n.endsWith(".yaml") || n.endsWith(".yml")) && !n.startsWith(".");
              })
          .sorted()
          .toList();
    } catch (IOException e) {
      standingError(path + " list", path + ": cannot be listed: " + e);
      return new ArrayList<>(lastGood.keySet());
    }
  }

  @Override
  public synchronized void close() {
    closed = true;
    if (pending != null) {
      pending.cancel(false);
    }
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing config watcher: {}", e.toString());
      }
    }
  }
}
