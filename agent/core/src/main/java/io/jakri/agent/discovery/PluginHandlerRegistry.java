package io.jakri.agent.discovery;

import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.FileTime;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
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
 * instances are created once per plugin and cached with their names (PF4J makes new ones on every
 * lookup). The plugin's own code run while loading (its start, the handlers' constructors, {@code
 * name()} and {@code aliases()}) runs on a thread of its own that is abandoned after {@link
 * #LOAD_TIMEOUT}: the jar is then refused, and loading goes on. Rescans after changes run on the
 * registry's own thread, never on the agent's scheduler.
 *
 * <p>A plugin's class loader is never closed while a thread of the plugin runs ({@link
 * PluginThreads}): a class the thread loads later would fail with {@code NoClassDefFoundError}.
 * Unloading a plugin (its jar removed or replaced, or the registry closed) stops it, then waits up
 * to the stop timeout for its threads to end; a loader whose threads outlast it is kept open,
 * logged once at WARN with the threads' names and counted ({@link #loadersKeptOpen}) until they
 * end, and closed then.
 */
public final class PluginHandlerRegistry implements HandlerRegistry, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(PluginHandlerRegistry.class);

  private final Path pluginsDir;
  private final PluginManager plugins;
  private final List<Runnable> listeners = new CopyOnWriteArrayList<>();
  private final List<LoadProblem> problems = new CopyOnWriteArrayList<>();
  private final java.util.function.Consumer<LoadProblem> problemSink;
  private volatile Map<String, DiscoveryHandler> byName = Map.of();
  private final Map<Path, Loaded> loaded = new LinkedHashMap<>();
  private final java.time.Duration stopTimeout;
  // Loaders of unloaded plugins whose threads still ran. Guarded by itself.
  private final List<KeptOpen> keptOpen = new ArrayList<>();

  /**
   * The handler instances of each started plugin, created once when it loads: PF4J creates new
   * extension objects on every lookup, and a new object for the same handler would look like a
   * replaced handler and restart every discovery whenever any other jar loads.
   */
  private final Map<String, List<Handler>> extensions = new java.util.HashMap<>();

  /** How long a plugin's own code may run while it loads before its jar is refused. */
  static final java.time.Duration LOAD_TIMEOUT = HandlerLimits.DEFAULT_CALL_TIMEOUT;

  private final Map<Path, Stamp> failed = new LinkedHashMap<>();
  private final java.util.Set<Path> ignored = new java.util.HashSet<>();
  private boolean missingReported;
  private boolean indexed;
  private PluginsWatch watch;

  /** A jar that could not be used, and why. */
  public record LoadProblem(Path jar, String reason) {}

  /** The class loader of an unloaded plugin, left open while threads of the plugin run. */
  private record KeptOpen(String pluginId, Path jar, ClassLoader loader) {}

  /** A handler and the names it answers to, asked once when its plugin loaded. */
  private record Handler(DiscoveryHandler handler, List<String> names) {}

  /** A plugin's own code did not return within {@link #LOAD_TIMEOUT}. */
  private static final class Stalled extends Exception {
    Stalled(String message) {
      super(message, null, false, false);
    }
  }

  /**
   * {@code plugins/} next to the jar {@code anchor} was loaded from, else {@code ./plugins}: where
   * a binary's bundled handler plugins are (the agent's, and the controller's for its webhook).
   */
  public static Path besideJar(Class<?> anchor) {
    try {
      Path jar = Path.of(anchor.getProtectionDomain().getCodeSource().getLocation().toURI());
      if (Files.isRegularFile(jar)) {
        return jar.getParent().resolve("plugins");
      }
    } catch (java.net.URISyntaxException | RuntimeException e) {
      // fall through to the working directory
    }
    return Path.of("plugins");
  }

  public PluginHandlerRegistry(Path pluginsDir, String agentVersion) {
    this(pluginsDir, agentVersion, problem -> {});
  }

  /**
   * @param problemSink told about each new load problem as it is found (on the thread loading or
   *     rescanning), e.g. to raise an Event; a jar that keeps failing is reported again only after
   *     it changed. Must not block.
   */
  public PluginHandlerRegistry(
      Path pluginsDir, String agentVersion, java.util.function.Consumer<LoadProblem> problemSink) {
    this(pluginsDir, agentVersion, problemSink, HandlerLimits.DEFAULT_CALL_TIMEOUT);
  }

  /**
   * @param stopTimeout how long an unloaded plugin's threads may run on before its class loader is
   *     kept open instead of closed
   */
  public PluginHandlerRegistry(
      Path pluginsDir,
      String agentVersion,
      java.util.function.Consumer<LoadProblem> problemSink,
      java.time.Duration stopTimeout) {
    this.pluginsDir = pluginsDir;
    this.problemSink = problemSink;
    this.stopTimeout = stopTimeout;
    Manager manager = new Manager(pluginsDir);
    manager.setSystemVersion(agentVersion);
    manager.setExactVersionAllowed(false);
    this.plugins = manager;
  }

  /** Loads every jar in the plugins directory. Never throws: problems are logged and kept. */
  public void loadAll() {
    rescan();
  }

  /**
   * Makes the loaded plugins match the directory: new jars are loaded, jars that changed (size or
   * modification time) are reloaded, removed jars are unloaded. Listeners are told before a
   * plugin's classes are unloaded, so running discoveries can be closed first. Idempotent.
   */
  public synchronized void rescan() {
    closeFinished();
    if (!Files.isDirectory(pluginsDir)) {
      if (!missingReported) {
        LOG.error("plugins directory {} does not exist: no discovery handlers loaded", pluginsDir);
        problem(new LoadProblem(pluginsDir, "plugins directory does not exist"));
        missingReported = true;
      }
      return;
    }
    Map<Path, Stamp> present = new LinkedHashMap<>();
    try (Stream<Path> listing = Files.list(pluginsDir)) {
      for (Path file : listing.sorted().toList()) {
        String name = file.getFileName().toString();
        if (!name.endsWith(".jar") || name.startsWith(".") || !Files.isRegularFile(file)) {
          if (!ignored.contains(file)) {
            LOG.info("plugins directory: ignoring {} (not a .jar file)", name);
            ignored.add(file);
          }
          continue;
        }
        present.put(file, Stamp.of(file));
      }
    } catch (IOException e) {
      LOG.error("plugins directory {} cannot be read: {}", pluginsDir, e.toString());
      problem(new LoadProblem(pluginsDir, e.toString()));
      return;
    }
    List<Loaded> leaving = new ArrayList<>();
    for (Map.Entry<Path, Loaded> e : new ArrayList<>(loaded.entrySet())) {
      Stamp now = present.get(e.getKey());
      if (now == null || !now.equals(e.getValue().stamp())) {
        leaving.add(e.getValue());
        loaded.remove(e.getKey());
      }
    }
    if (!leaving.isEmpty()) {
      // Index without the leaving plugins first: listeners stop their discoveries while the
      // classes are still loaded (and nothing restarts on them).
      rebuildIndex(
          leaving.stream().map(Loaded::pluginId).collect(java.util.stream.Collectors.toSet()));
      leaving.forEach(gone -> extensions.remove(gone.pluginId()));
      unload(leaving);
    }
    boolean added = false;
    for (Map.Entry<Path, Stamp> e : present.entrySet()) {
      if (!loaded.containsKey(e.getKey()) && !e.getValue().equals(failed.get(e.getKey()))) {
        Optional<String> id = load(e.getKey());
        if (id.isPresent()) {
          loaded.put(e.getKey(), new Loaded(e.getKey(), id.get(), e.getValue()));
          failed.remove(e.getKey());
          added = true;
        } else {
          failed.put(e.getKey(), e.getValue()); // not retried until the file changes
        }
      }
    }
    failed.keySet().retainAll(present.keySet());
    if (added || !leaving.isEmpty() || !indexed) {
      rebuildIndex(Set.of());
      indexed = true;
    }
  }

  /**
   * Watches the plugins directory and rescans when jars appear, change or vanish (writers should
   * copy to a temporary name and rename into place). Events are debounced on {@code scheduler}
   * ({@link PluginsWatch}). Called once; later calls do nothing.
   */
  public synchronized void watch(ScheduledExecutorService scheduler) {
    if (watch != null) {
      return;
    }
    watch = new PluginsWatch(pluginsDir, this::rescan, scheduler);
    if (watch.start()) {
      LOG.info("watching plugins directory {} for handler jars", pluginsDir);
    }
  }

  /** Size and modification time: a replaced jar gets a new stamp. */
  private record Stamp(long size, FileTime modified, Object key) {
    static Stamp of(Path file) throws IOException {
      BasicFileAttributes a = Files.readAttributes(file, BasicFileAttributes.class);
      return new Stamp(a.size(), a.lastModifiedTime(), a.fileKey());
    }
  }

  private record Loaded(Path jar, String pluginId, Stamp stamp) {}

  private Optional<String> load(Path jar) {
    Optional<String> refused = PluginJarCheck.problem(jar).or(() -> versionProblem(jar));
    if (refused.isPresent()) {
      fail(jar, refused.get());
      return Optional.empty();
    }
    Optional<String> duplicate =
        PluginJarCheck.pluginId(jar)
            .flatMap(
                id ->
                    loaded.values().stream()
                        .filter(l -> l.pluginId().equals(id))
                        .findFirst()
                        .map(
                            l ->
                                "plugin id \""
                                    + id
                                    + "\" is already loaded from "
                                    + l.jar().getFileName()
                                    + "; this jar is ignored (remove one of the two, or give one"
                                    + " another Plugin-Id)"));
    if (duplicate.isPresent()) {
      fail(jar, duplicate.get());
      return Optional.empty();
    }
    String pluginId = null;
    try {
      pluginId = plugins.loadPlugin(jar);
      if (pluginId == null) {
        fail(jar, "not a valid plugin jar");
        return Optional.empty();
      }
      String id = pluginId;
      ClassLoader loader = plugins.getPluginClassLoader(id);
      PluginState state = bounded(jar, loader, "start", () -> plugins.startPlugin(id));
      if (state != PluginState.STARTED) {
        PluginWrapper wrapper = plugins.getPlugin(pluginId);
        String reason =
            wrapper != null && wrapper.getFailedException() != null
                ? wrapper.getFailedException().getMessage()
                : "plugin state " + state;
        fail(jar, reason);
        unload(List.of(new Loaded(jar, pluginId, null)));
        return Optional.empty();
      }
      List<Handler> found = bounded(jar, loader, "create its handlers", () -> handlersOf(id));
      if (found.isEmpty()) {
        fail(jar, "plugin " + pluginId + " contains no DiscoveryHandler extension");
        unload(List.of(new Loaded(jar, pluginId, null)));
        return Optional.empty();
      }
      extensions.put(pluginId, List.copyOf(found));
      LOG.info(
          "plugin {} ({}): loaded handlers {}",
          pluginId,
          jar.getFileName(),
          found.stream().map(h -> h.names().get(0)).toList());
      return Optional.of(pluginId);
    } catch (Stalled e) {
      // Not unloaded: stopping it would run its code again, here. Its thread is left to run.
      fail(jar, e.getMessage());
      return Optional.empty();
    } catch (RuntimeException | LinkageError e) {
      fail(jar, e.getMessage() == null ? e.toString() : e.getMessage());
      if (pluginId != null) {
        unload(List.of(new Loaded(jar, pluginId, null)));
      }
      return Optional.empty();
    }
  }

  /** The plugin's handlers with their names (the handlers' own code). */
  private List<Handler> handlersOf(String pluginId) {
    List<Handler> found = new ArrayList<>();
    for (DiscoveryHandler handler : plugins.getExtensions(DiscoveryHandler.class, pluginId)) {
      List<String> names = new ArrayList<>();
      try {
        names.add(handler.name());
        names.addAll(handler.aliases());
      } catch (RuntimeException | LinkageError e) {
        throw new IllegalStateException("handler name() failed: " + e, e);
      }
      found.add(new Handler(handler, List.copyOf(names)));
    }
    return List.copyOf(found);
  }

  /**
   * Unloads plugins whose discoveries were closed: stops each, waits up to {@link #stopTimeout}
   * (one deadline for all) for their threads to end, then unloads them from PF4J, closing the class
   * loaders of those whose threads ended and keeping the others open.
   */
  private void unload(List<Loaded> gone) {
    Map<Loaded, ClassLoader> loaders = new LinkedHashMap<>();
    Set<Loaded> stalled = new java.util.HashSet<>();
    for (Loaded plugin : gone) {
      ClassLoader loader = plugins.getPluginClassLoader(plugin.pluginId());
      try {
        bounded(plugin.jar(), loader, "stop", () -> plugins.stopPlugin(plugin.pluginId()));
      } catch (Stalled e) {
        // Not unloaded: PF4J would run its stop again, here. Its class loader stays open.
        LOG.warn("plugin {}: {}", plugin.pluginId(), e.getMessage());
        stalled.add(plugin);
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("plugin {}: stopping failed: {}", plugin.pluginId(), e.toString());
      }
      if (loader != null) {
        loaders.put(plugin, loader);
      }
    }
    Map<ClassLoader, List<Thread>> running;
    try {
      running = PluginThreads.awaitEnd(loaders.values(), System.nanoTime() + stopTimeout.toNanos());
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      running = new java.util.IdentityHashMap<>();
      for (ClassLoader loader : loaders.values()) {
        running.put(loader, PluginThreads.of(loader));
      }
    }
    for (Loaded plugin : gone) {
      ClassLoader loader = loaders.get(plugin);
      List<Thread> threads = loader == null ? List.of() : running.getOrDefault(loader, List.of());
      if (loader != null && (!threads.isEmpty() || stalled.contains(plugin))) {
        ((Manager) plugins).keepOpen(plugin.pluginId());
        synchronized (keptOpen) {
          keptOpen.add(new KeptOpen(plugin.pluginId(), plugin.jar(), loader));
        }
        LOG.warn(
            "plugin {} ({}): {} of its threads still run {} after it was stopped: {}; its class"
                + " loader is kept open (closed once they end) so they can still load its classes",
            plugin.pluginId(),
            plugin.jar().getFileName(),
            threads.size(),
            io.jakri.logging.DurationText.of(stopTimeout),
            threads.stream().map(t -> io.jakri.logging.LogText.escape(t.getName())).toList());
      }
      if (stalled.contains(plugin)) {
        continue;
      }
      try {
        if (plugins.unloadPlugin(plugin.pluginId())) {
          LOG.info("plugin {} ({}): unloaded", plugin.pluginId(), plugin.jar().getFileName());
        } else {
          // PF4J keeps a plugin it could not stop; it stays loaded, its handlers already gone.
          LOG.warn(
              "plugin {} ({}): PF4J did not unload it (state {})",
              plugin.pluginId(),
              plugin.jar().getFileName(),
              Optional.ofNullable(plugins.getPlugin(plugin.pluginId()))
                  .map(PluginWrapper::getPluginState)
                  .map(Object::toString)
                  .orElse("gone"));
        }
      } catch (RuntimeException | LinkageError e) {
        LOG.warn("plugin {}: unloading failed: {}", plugin.pluginId(), e.toString());
      }
    }
  }

  /**
   * Closes the kept-open class loaders whose threads have ended. A loader leaves the count only
   * once it is closed (under the same lock), so {@link #loadersKeptOpen} never reads one as gone
   * that is still open.
   */
  private void closeFinished() {
    synchronized (keptOpen) {
      for (var it = keptOpen.iterator(); it.hasNext(); ) {
        KeptOpen kept = it.next();
        if (!PluginThreads.of(kept.loader()).isEmpty()) {
          continue;
        }
        try {
          if (kept.loader() instanceof java.io.Closeable closeable) {
            closeable.close();
          }
          LOG.info(
              "plugin {} ({}): its last threads ended; class loader closed",
              kept.pluginId(),
              kept.jar().getFileName());
        } catch (IOException e) {
          LOG.warn("plugin {}: closing its class loader: {}", kept.pluginId(), e.toString());
        }
        it.remove();
      }
    }
  }

  /**
   * Unloaded plugins whose class loader is kept open because threads of theirs still run (loaders
   * whose threads have ended are closed first). Any thread.
   */
  public int loadersKeptOpen() {
    closeFinished();
    synchronized (keptOpen) {
      return keptOpen.size();
    }
  }

  /**
   * Runs a plugin's own code on a thread of its own whose context class loader is the plugin's
   * ({@code loader}; the agent's when null), abandoned (interrupted and left to run) when it does
   * not return within {@link #LOAD_TIMEOUT}.
   */
  private static <T> T bounded(
      Path jar, ClassLoader loader, String what, java.util.concurrent.Callable<T> body)
      throws Stalled {
    java.util.concurrent.FutureTask<T> task = new java.util.concurrent.FutureTask<>(body);
    Thread thread = new Thread(task, "jakri-plugin-load-" + jar.getFileName());
    thread.setDaemon(true);
    thread.setContextClassLoader(
        loader != null ? loader : PluginHandlerRegistry.class.getClassLoader());
    thread.start();
    try {
      return task.get(LOAD_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (java.util.concurrent.TimeoutException e) {
      thread.interrupt();
      LOG.warn(
          "plugin jar {} blocks: it did not {} within {}; thread {} is abandoned",
          jar.getFileName(),
          what,
          io.jakri.logging.DurationText.of(LOAD_TIMEOUT),
          thread.getName());
      throw new Stalled(
          "the plugin did not "
              + what
              + " within "
              + io.jakri.logging.DurationText.of(LOAD_TIMEOUT)
              + " (its code blocks; its thread is abandoned)");
    } catch (java.util.concurrent.ExecutionException e) {
      Throwable cause = e.getCause();
      if (cause instanceof RuntimeException r) {
        throw r;
      }
      if (cause instanceof Error err) {
        throw err;
      }
      throw new IllegalStateException(cause);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      thread.interrupt();
      throw new Stalled("interrupted while the plugin loaded");
    }
  }

  /**
   * PF4J reports an unmet {@code Plugin-Requires} only as "Plugin validation failed"; this says
   * which agent version the jar needs and which one is running.
   */
  private Optional<String> versionProblem(Path jar) {
    try (java.util.jar.JarFile file = new java.util.jar.JarFile(jar.toFile(), false)) {
      java.util.jar.Manifest manifest = file.getManifest();
      String requires =
          manifest == null ? null : manifest.getMainAttributes().getValue("Plugin-Requires");
      if (requires == null || requires.isBlank() || requires.strip().equals("*")) {
        return Optional.empty();
      }
      String running = plugins.getSystemVersion();
      if (plugins.getVersionManager().checkVersionConstraint(running, requires.strip())) {
        return Optional.empty();
      }
      return Optional.of(
          "requires agent version " + requires.strip() + " but this agent is " + running);
    } catch (IOException | RuntimeException e) {
      return Optional.empty(); // PF4J reports unreadable jars and bad constraints itself
    }
  }

  private void fail(Path jar, String reason) {
    LOG.error("plugin jar {} not loaded: {}", jar.getFileName(), reason);
    problem(new LoadProblem(jar, reason));
  }

  private void problem(LoadProblem problem) {
    problems.add(problem);
    try {
      problemSink.accept(problem);
    } catch (RuntimeException e) {
      LOG.warn("plugin problem sink failed: {}", e.toString());
    }
  }

  private void rebuildIndex(Set<String> excluding) {
    Map<String, DiscoveryHandler> index = new LinkedHashMap<>();
    for (PluginWrapper wrapper : plugins.getStartedPlugins()) {
      if (excluding.contains(wrapper.getPluginId())) {
        continue;
      }
      List<Handler> handlers = extensions.get(wrapper.getPluginId());
      if (handlers == null) {
        // Started but never indexed: a plugin whose load stalled, left running on purpose (see
        // load) and already reported. Its code is not run again here: asking it for its handlers
        // once more stalled every later rescan for the timeout and reported the jar twice.
        continue;
      }
      for (Handler named : handlers) {
        DiscoveryHandler handler = named.handler();
        for (String name : named.names()) {
          DiscoveryHandler previous = index.putIfAbsent(name, handler);
          if (previous != null && previous != handler) {
            String reason =
                "handler name \""
                    + name
                    + "\" is already provided by another plugin (loaded earlier); this one is"
                    + " ignored for it";
            if (problems.stream()
                .noneMatch(
                    p -> p.jar().equals(wrapper.getPluginPath()) && p.reason().equals(reason))) {
              fail(wrapper.getPluginPath(), reason);
            }
          }
        }
      }
    }
    byName = Map.copyOf(index);
    listeners.forEach(Runnable::run);
  }

  /** PF4J's manager, able to unload a plugin without closing its class loader. */
  private static final class Manager extends DefaultPluginManager {
    Manager(Path pluginsDir) {
      super(pluginsDir);
    }

    /** The next {@code unloadPlugin(pluginId)} leaves the plugin's class loader open. */
    void keepOpen(String pluginId) {
      getPluginClassLoaders().remove(pluginId);
    }
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

  /**
   * Stops watching and unloads every plugin as {@link #rescan} unloads a removed one: a class
   * loader is closed only once its plugin's threads have ended (waiting at most the stop timeout).
   */
  @Override
  public synchronized void close() {
    if (watch != null) {
      watch.close();
    }
    List<Loaded> all = new ArrayList<>(loaded.values());
    loaded.clear();
    extensions.clear();
    byName = Map.of();
    unload(all);
    closeFinished();
    try {
      // unloadPlugins() stops each plugin itself; PF4J 3.15's stopPlugins() can throw
      // ConcurrentModificationException.
      plugins.unloadPlugins();
    } catch (RuntimeException e) {
      LOG.warn("stopping plugins: {}", e.toString());
    }
  }
}
