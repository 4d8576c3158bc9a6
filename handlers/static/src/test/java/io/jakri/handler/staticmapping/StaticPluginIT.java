package io.jakri.handler.staticmapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pf4j.DefaultPluginManager;
import org.pf4j.PluginManager;
import org.pf4j.PluginState;
import org.pf4j.PluginWrapper;

/**
 * Loads the packaged plugin jar through PF4J the way the agent does. The failsafe configuration
 * keeps this module's own classes off the test classpath, so everything found here came from the
 * jar.
 */
class StaticPluginIT {

  private static final Path JAR = Path.of(System.getProperty("plugin.jar"));

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private PluginManager plugins;

  @AfterEach
  void tearDown() {
    if (plugins != null) {
      // unloadPlugins() stops each plugin first; PF4J 3.15's stopPlugins() throws
      // ConcurrentModificationException as soon as one plugin is started.
      plugins.unloadPlugins();
    }
    scheduler.shutdownNow();
  }

  @Test
  void jarIsAPf4jPluginWithAnExtensionIndexAndNoBundledApi() throws IOException {
    try (JarFile jar = new JarFile(JAR.toFile())) {
      Attributes manifest = jar.getManifest().getMainAttributes();
      assertThat(manifest.getValue("Plugin-Id")).isEqualTo("static");
      assertThat(manifest.getValue("Plugin-Version")).isEqualTo("0.1.0");
      assertThat(manifest.getValue("Plugin-Requires")).isEqualTo(">=0.1.0");
      try (InputStream index = jar.getInputStream(jar.getEntry("META-INF/extensions.idx"))) {
        assertThat(new String(index.readAllBytes(), StandardCharsets.UTF_8))
            .contains("io.jakri.handler.staticmapping.StaticHandler");
      }
      assertThat(jar.stream().map(entry -> entry.getName()))
          .noneMatch(name -> name.startsWith("org/pf4j/") || name.startsWith("org/yaml/"))
          .noneMatch(name -> name.matches("io/jakri/handler/[^/]+\\.class"));
    }
  }

  @Test
  void pluginManagerLoadsTheJarAndFindsExactlyTheStaticHandler(@TempDir Path pluginsDir)
      throws Exception {
    Files.copy(JAR, pluginsDir.resolve(JAR.getFileName()));
    DefaultPluginManager manager = new DefaultPluginManager(pluginsDir);
    plugins = manager;
    manager.setSystemVersion("0.1.0");
    manager.loadPlugins();
    manager.startPlugins();

    PluginWrapper plugin = manager.getPlugin("static");
    assertThat(plugin).isNotNull();
    assertThat(plugin.getPluginState()).isEqualTo(PluginState.STARTED);
    List<DiscoveryHandler> handlers = manager.getExtensions(DiscoveryHandler.class);
    assertThat(handlers).extracting(DiscoveryHandler::name).containsExactly("static");
    DiscoveryHandler handler = handlers.get(0);
    assertThat(handler.aliases()).isEmpty();
    assertThat(handler.getClass().getClassLoader()).isSameAs(plugin.getPluginClassLoader());

    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(
            "spookd",
            "minikube",
            "deviceMapping: [{hosts: [minikube], devices: [{resourceName: example.com/widget,"
                + " instanceID: \"0001\", env: {IP: 192.168.0.200}}]}]",
            Map.of(),
            scheduler);
    try (Discovery discovery = handler.start(context, listener)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots.isEmpty());
    }
    assertThat(listener.snapshots.get(0))
        .extracting(DiscoveredDevice::id)
        .containsExactly("example.com/widget/0001");
  }

  @Test
  void pluginIsRejectedByAnOlderAgent(@TempDir Path pluginsDir) throws Exception {
    Files.copy(JAR, pluginsDir.resolve(JAR.getFileName()));
    DefaultPluginManager manager = new DefaultPluginManager(pluginsDir);
    plugins = manager;
    manager.setSystemVersion("0.0.9");
    manager.loadPlugins();
    manager.startPlugins();

    assertThat(manager.getExtensions(DiscoveryHandler.class)).isEmpty();
  }
}
