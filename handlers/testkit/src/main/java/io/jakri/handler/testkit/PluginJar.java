package io.jakri.handler.testkit;

import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.pf4j.DefaultPluginManager;
import org.pf4j.PluginManager;
import org.pf4j.PluginWrapper;

/**
 * A packaged plugin jar loaded through PF4J the way the agent loads it: copied into a plugins
 * directory of its own, loaded and started by a plugin manager that claims {@code systemVersion}.
 * Close it to stop and unload the plugin. Not thread-safe.
 */
public final class PluginJar implements AutoCloseable {

  /** The system property failsafe sets to the module's packaged jar. */
  public static final String JAR_PROPERTY = "plugin.jar";

  private final Path jar;
  private final DefaultPluginManager manager;

  private PluginJar(Path jar, DefaultPluginManager manager) {
    this.jar = jar;
    this.manager = manager;
  }

  /** The jar named by the {@value #JAR_PROPERTY} system property. */
  public static Path packagedJar() {
    String path = System.getProperty(JAR_PROPERTY);
    if (path == null || path.isBlank()) {
      throw new IllegalStateException(
          "system property " + JAR_PROPERTY + " is not set (failsafe sets it to the packaged jar)");
    }
    return Path.of(path);
  }

  /**
   * Loads the module's packaged jar ({@value #JAR_PROPERTY}) as an agent of the version in the
   * system property {@value PluginJarContract#AGENT_VERSION_PROPERTY} would.
   */
  public static PluginJar loadPackaged(Path pluginsDir) throws IOException {
    String version = System.getProperty(PluginJarContract.AGENT_VERSION_PROPERTY);
    if (version == null || version.isBlank()) {
      throw new IllegalStateException(
          "system property "
              + PluginJarContract.AGENT_VERSION_PROPERTY
              + " is not set (the handlers parent POM sets it)");
    }
    return load(packagedJar(), pluginsDir, version);
  }

  /** Copies {@code jar} into {@code pluginsDir}, then loads and starts it. */
  public static PluginJar load(Path jar, Path pluginsDir, String systemVersion) throws IOException {
    Files.copy(jar, pluginsDir.resolve(jar.getFileName()));
    DefaultPluginManager manager = new DefaultPluginManager(pluginsDir);
    manager.setSystemVersion(systemVersion);
    manager.loadPlugins();
    manager.startPlugins();
    return new PluginJar(jar, manager);
  }

  /** The plugin manager (for state and class-loader checks). */
  public PluginManager manager() {
    return manager;
  }

  /** The loaded plugin with this id, if PF4J accepted it. */
  public java.util.Optional<PluginWrapper> plugin(String id) {
    return java.util.Optional.ofNullable(manager.getPlugin(id));
  }

  /** Every discovery handler the started plugins provide. */
  public List<DiscoveryHandler> handlers() {
    return manager.getExtensions(DiscoveryHandler.class);
  }

  /** The one handler of the jar; throws when it provides none or several. */
  public DiscoveryHandler handler() {
    List<DiscoveryHandler> handlers = handlers();
    if (handlers.size() != 1) {
      throw new IllegalStateException("expected one handler in " + jar + " but found " + handlers);
    }
    return handlers.get(0);
  }

  @Override
  public void close() {
    // unloadPlugins() stops each plugin first; PF4J 3.15's stopPlugins() throws
    // ConcurrentModificationException as soon as one plugin is started.
    manager.unloadPlugins();
  }
}
