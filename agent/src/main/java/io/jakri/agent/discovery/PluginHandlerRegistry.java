package io.jakri.agent.discovery;

import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.stream.Stream;
import org.pf4j.DefaultPluginManager;
import org.pf4j.PluginManager;
import org.pf4j.PluginState;
import org.pf4j.PluginWrapper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Discovery handlers loaded with PF4J from the {@code *.jar} files of a plugins directory. Each jar
 * is loaded on its own, so a broken jar (not a zip, no manifest, a newer required agent version, a
 * class that fails to load) is reported with its file name and the others still load. Handler
 * instances are created once per plugin and cached (PF4J makes new ones on every lookup).
 */
public final class PluginHandlerRegistry implements HandlerRegistry, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PluginHandlerRegistry.class);

  private final Path pluginsDir;
  private final PluginManager plugins;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private final List<LoadProblem> problems = new CopyOnWriteArrayList<>();
  private volatile Map<String, DiscoveryHandler> byName = Map.of();

  /** A jar that could not be used, and why. */
  public record LoadProblem(Path jar, String reason) {}

  public PluginHandlerRegistry(Path pluginsDir, String agentVersion) {
    this.pluginsDir = pluginsDir;
    DefaultPluginManager manager = new DefaultPluginManager(pluginsDir);
    manager.setSystemVersion(agentVersion);
    manager.setExactVersionAllowed(false);
    this.plugins = manager;
  }

  /** Loads every jar in the plugins directory. Never throws: problems are logged and kept. */
  public synchronized void loadAll() {
    if (!Files.isDirectory(pluginsDir)) {
      LOG.error("plugins directory {} does not exist: no discovery handlers loaded", pluginsDir);
      problems.add(new LoadProblem(pluginsDir, "plugins directory does not exist"));
      return;
    }
    List<Path> files;
    try (Stream<Path> listing = Files.list(pluginsDir)) {
      files = listing.sorted().toList();
    } catch (IOException e) {
      LOG.error("plugins directory {} cannot be read: {}", pluginsDir, e.toString());
      problems.add(new LoadProblem(pluginsDir, e.toString()));
      return;
    }
    for (Path file : files) {
      if (!file.getFileName().toString().endsWith(".jar") || !Files.isRegularFile(file)) {
        LOG.info("plugins directory: ignoring {} (not a .jar file)", file.getFileName());
        continue;
      }
      load(file);
    }
    rebuildIndex();
  }

  private void load(Path jar) {
    String pluginId = null;
    try {
      pluginId = plugins.loadPlugin(jar);
      if (pluginId == null) {
        fail(jar, "not a valid plugin jar");
        return;
      }
      PluginState state = plugins.startPlugin(pluginId);
      if (state != PluginState.STARTED) {
        PluginWrapper wrapper = plugins.getPlugin(pluginId);
        String reason =
            wrapper != null && wrapper.getFailedException() != null
                ? wrapper.getFailedException().getMessage()
                : "plugin state " + state;
        fail(jar, reason);
        plugins.unloadPlugin(pluginId);
        return;
      }
      List<DiscoveryHandler> found = plugins.getExtensions(DiscoveryHandler.class, pluginId);
      if (found.isEmpty()) {
        fail(jar, "plugin " + pluginId + " contains no DiscoveryHandler extension");
        return;
      }
      LOG.info(
          "plugin {} ({}): loaded handlers {}",
          pluginId,
          jar.getFileName(),
          found.stream().map(DiscoveryHandler::name).toList());
    } catch (RuntimeException | LinkageError e) {
      fail(jar, e.getMessage() == null ? e.toString() : e.getMessage());
      if (pluginId != null) {
        try {
          plugins.unloadPlugin(pluginId);
        } catch (RuntimeException ignored) {
          LOG.debug("unloading failed plugin {}", pluginId);
        }
      }
    }
  }

  private void fail(Path jar, String reason) {
    LOG.error("plugin jar {} not loaded: {}", jar.getFileName(), reason);
    problems.add(new LoadProblem(jar, reason));
  }

  private void rebuildIndex() {
    Map<String, DiscoveryHandler> index = new LinkedHashMap<>();
    for (PluginWrapper wrapper : plugins.getStartedPlugins()) {
      List<DiscoveryHandler> handlers;
      try {
        handlers = plugins.getExtensions(DiscoveryHandler.class, wrapper.getPluginId());
      } catch (RuntimeException | LinkageError e) {
        fail(wrapper.getPluginPath(), "extensions cannot be created: " + e);
        continue;
      }
      for (DiscoveryHandler handler : handlers) {
        List<String> names = new ArrayList<>();
        try {
          names.add(handler.name());
          names.addAll(handler.aliases());
        } catch (RuntimeException | LinkageError e) {
          fail(wrapper.getPluginPath(), "handler name() failed: " + e);
          continue;
        }
        for (String name : names) {
          DiscoveryHandler previous = index.putIfAbsent(name, handler);
          if (previous != null && previous != handler) {
            LOG.error(
                "handler name {} is provided twice; keeping the first, ignoring plugin {}",
                name,
                wrapper.getPluginId());
          }
        }
      }
    }
    byName = Map.copyOf(index);
    listeners.forEach(Runnable::run);
  }

  @Override
  public Optional<DiscoveryHandler> find(String name) {
    return Optional.ofNullable(byName.get(name));
  }

  @Override
  public Set<String> names() {
    return new TreeSet<>(byName.keySet());
  }

  @Override
  public void addListener(Runnable onChange) {
    listeners.add(onChange);
  }

  /** Jars that failed to load, with reasons (for status, metrics and tests). */
  public List<LoadProblem> problems() {
    return List.copyOf(problems);
  }

  @Override
  public synchronized void close() {
    try {
      // unloadPlugins() stops each plugin itself; PF4J 3.15's stopPlugins() can throw
      // ConcurrentModificationException.
      plugins.unloadPlugins();
    } catch (RuntimeException e) {
      LOG.warn("stopping plugins: {}", e.toString());
    }
  }
}
