package io.jakri.handler.zeroconf;

import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.pf4j.DefaultPluginManager;

/**
 * The packaged plugin jar (system property {@code plugin.jar}, set by failsafe), loaded through
 * PF4J the way the agent loads it.
 */
final class PluginJar implements AutoCloseable {

  static final Path JAR = Path.of(System.getProperty("plugin.jar", "target/missing.jar"));

  final DefaultPluginManager manager;
  final List<DiscoveryHandler> handlers;

  private PluginJar(DefaultPluginManager manager) {
    this.manager = manager;
    this.handlers = manager.getExtensions(DiscoveryHandler.class);
  }

  /** Copies the jar into {@code pluginsDir} and loads and starts it. */
  static PluginJar load(Path pluginsDir) throws IOException {
    Files.copy(JAR, pluginsDir.resolve(JAR.getFileName()));
    DefaultPluginManager manager = new DefaultPluginManager(pluginsDir);
    manager.setSystemVersion("0.1.0");
    manager.loadPlugins();
    manager.startPlugins();
    return new PluginJar(manager);
  }

  DiscoveryHandler handler() {
    if (handlers.size() != 1) {
      throw new IllegalStateException("expected one handler in " + JAR + " but found " + handlers);
    }
    return handlers.get(0);
  }

  @Override
  public void close() {
    // unloadPlugins() stops each plugin first (PF4J 3.15's stopPlugins() trips over itself).
    manager.unloadPlugins();
  }
}
