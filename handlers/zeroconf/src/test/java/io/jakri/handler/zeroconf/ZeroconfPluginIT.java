package io.jakri.handler.zeroconf;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.jar.Attributes;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pf4j.PluginState;

/**
 * The packaged jar: a PF4J plugin with JmDNS shaded and relocated inside, and nothing the agent
 * provides. Failsafe keeps this module's classes off the classpath, so the handler comes from the
 * jar.
 */
class ZeroconfPluginIT {

  private final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
  private PluginJar plugin;

  @AfterEach
  void tearDown() {
    if (plugin != null) {
      plugin.close();
    }
    scheduler.shutdownNow();
  }

  @Test
  void jarCarriesPf4jManifestExtensionIndexAndRelocatedJmdnsOnly() throws Exception {
    try (JarFile jar = new JarFile(PluginJar.JAR.toFile())) {
      Attributes manifest = jar.getManifest().getMainAttributes();
      assertThat(manifest.getValue("Plugin-Id")).isEqualTo("zeroconf");
      assertThat(manifest.getValue("Plugin-Version")).isEqualTo("0.1.0");
      assertThat(manifest.getValue("Plugin-Requires")).isEqualTo(">=0.1.0");
      try (InputStream index = jar.getInputStream(jar.getEntry("META-INF/extensions.idx"))) {
        assertThat(new String(index.readAllBytes(), StandardCharsets.UTF_8))
            .contains("io.jakri.handler.zeroconf.ZeroconfHandler");
      }
      List<String> names = jar.stream().map(e -> e.getName()).toList();
      assertThat(names)
          .contains("io/jakri/handler/zeroconf/shaded/jmdns/JmDNS.class")
          .contains("io/jakri/handler/zeroconf/shaded/jmdns/impl/JmDNSImpl.class")
          .noneMatch(n -> n.startsWith("javax/"))
          .noneMatch(n -> n.startsWith("org/slf4j/"))
          .noneMatch(n -> n.startsWith("org/pf4j/"))
          .noneMatch(n -> n.startsWith("org/yaml/"))
          .noneMatch(n -> n.matches("io/jakri/handler/[^/]+\\.class"))
          .noneMatch(n -> n.equals("META-INF/INDEX.LIST"));
    }
  }

  @Test
  void pluginManagerFindsExactlyTheZeroconfHandlerInThePluginClassLoader(@TempDir Path plugins)
      throws Exception {
    plugin = PluginJar.load(plugins);

    assertThat(plugin.manager.getPlugin("zeroconf").getPluginState())
        .isEqualTo(PluginState.STARTED);
    DiscoveryHandler handler = plugin.handler();
    assertThat(handler.name()).isEqualTo("zeroconf");
    assertThat(handler.getClass().getClassLoader())
        .isSameAs(plugin.manager.getPlugin("zeroconf").getPluginClassLoader());
    assertThat(
            handler
                .validate(new DiscoveryContext("c", "n", "kind: nope", Map.of(), scheduler))
                .errors())
        .singleElement()
        .asString()
        .startsWith("kind must be a DNS-SD service type");
  }

  @Test
  void discoveryOnAMissingInterfaceReportsFailureAndClosesPromptly(@TempDir Path plugins)
      throws Exception {
    plugin = PluginJar.load(plugins);
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(
            "zc", "node", "kind: _http._tcp\ninterfaces: [jkz-none0]", Map.of(), scheduler);

    Discovery discovery = plugin.handler().start(context, listener);
    await().atMost(Duration.ofSeconds(10)).until(() -> !listener.failures.isEmpty());
    long begin = System.nanoTime();
    discovery.close();

    assertThat(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - begin)).isLessThan(500);
    assertThat(listener.failures).containsExactly("none of interfaces [jkz-none0] is usable");
    assertThat(listener.snapshots).isEmpty();
  }
}
