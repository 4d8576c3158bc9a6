package io.jakri.handler.testkit;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.jar.Attributes;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.pf4j.PluginState;
import org.pf4j.PluginWrapper;

/**
 * What every handler plugin jar must be for the agent to load it: extend this class in the plugin's
 * integration tests (run by failsafe after {@code package}, with the module's own classes kept off
 * the classpath and the system properties {@value PluginJar#JAR_PROPERTY} and {@value
 * #AGENT_VERSION_PROPERTY} set, as the handlers parent POM does) and say what the jar provides.
 *
 * <p>The contract: a PF4J manifest naming the plugin, its version and the agent versions it needs;
 * an extension index naming the handler; none of the classes the agent provides bundled (a second
 * copy of the handler API, PF4J, SnakeYAML or SLF4J would split the class space); loaded by an
 * agent of the current version it provides exactly one handler, from the plugin's class loader,
 * with the expected name and aliases, which rejects bad details; an agent older than the plugin
 * requires refuses it. Handlers that can discover without a network or hardware extend {@link
 * DiscoveringPluginJarContract} instead, which also runs a sample discovery.
 */
public abstract class PluginJarContract {

  /** The system property carrying the version of the agent the plugin is built for. */
  public static final String AGENT_VERSION_PROPERTY = "jakri.agent.version";

  /** Package prefixes a plugin jar must not define classes in: the agent provides them. */
  public static final List<String> AGENT_PROVIDED =
      List.of("org/pf4j/", "org/yaml/", "org/slf4j/", "java/", "javax/", "jdk/");

  /** Shared with subclasses' tests; shut down after each test. */
  protected final ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);

  private PluginJar plugin;

  /** The manifest's Plugin-Id. */
  protected abstract String pluginId();

  /** The handler's class, as named in the extension index. */
  protected abstract String handlerClass();

  /** The handler's name (what a Configuration's discoveryHandler.name says). */
  protected abstract String handlerName();

  /** The handler's aliases, in order. */
  protected List<String> aliases() {
    return List.of();
  }

  /** Details the handler's validate must reject, and the start of its first error. */
  protected abstract Map.Entry<String, String> invalidDetails();

  @AfterEach
  void closePlugin() {
    if (plugin != null) {
      plugin.close();
    }
    scheduler.shutdownNow();
  }

  @Test
  void jarIsAPf4jPluginWithAnExtensionIndexAndBundlesNothingTheAgentProvides() throws IOException {
    try (JarFile jar = new JarFile(PluginJar.packagedJar().toFile())) {
      Attributes manifest = jar.getManifest().getMainAttributes();
      assertThat(manifest.getValue("Plugin-Id")).isEqualTo(pluginId());
      assertThat(manifest.getValue("Plugin-Version")).isNotBlank();
      assertThat(manifest.getValue("Plugin-Requires")).isNotBlank().isNotEqualTo("*");
      JarEntry index = jar.getJarEntry("META-INF/extensions.idx");
      assertThat(index).as("META-INF/extensions.idx").isNotNull();
      try (InputStream in = jar.getInputStream(index)) {
        assertThat(new String(in.readAllBytes(), StandardCharsets.UTF_8).lines())
            .contains(handlerClass());
      }
      List<String> classes =
          jar.stream().map(JarEntry::getName).filter(n -> n.endsWith(".class")).toList();
      assertThat(classes)
          .as("classes the agent provides")
          .noneMatch(n -> AGENT_PROVIDED.stream().anyMatch(n::startsWith))
          .noneMatch(n -> n.matches("io/jakri/handler/[^/]+\\.class"))
          .noneMatch(n -> n.startsWith("io/jakri/agent/") || n.startsWith("io/jakri/kubelet/"));
    }
  }

  @Test
  void theAgentFindsExactlyTheHandlerInThePluginsClassLoader(@TempDir Path plugins)
      throws Exception {
    load(plugins);

    PluginWrapper wrapper = plugin.plugin(pluginId()).orElseThrow();
    assertThat(wrapper.getPluginState()).isEqualTo(PluginState.STARTED);
    DiscoveryHandler handler = plugin.handler();
    assertThat(handler.name()).isEqualTo(handlerName());
    assertThat(handler.aliases()).containsExactlyElementsOf(aliases());
    assertThat(handler.getClass().getName()).isEqualTo(handlerClass());
    assertThat(handler.getClass().getClassLoader()).isSameAs(wrapper.getPluginClassLoader());

    Map.Entry<String, String> invalid = invalidDetails();
    assertThat(
            handler
                .validate(new DiscoveryContext("c", "n", invalid.getKey(), Map.of(), scheduler))
                .errors())
        .first()
        .asString()
        .startsWith(invalid.getValue());
  }

  @Test
  void anAgentOlderThanThePluginRequiresRefusesIt(@TempDir Path plugins) throws Exception {
    // Not 0.0.0: PF4J turns its version checks off for that system version.
    plugin = PluginJar.load(PluginJar.packagedJar(), plugins, "0.0.1");

    assertThat(plugin.handlers()).isEmpty();
    assertThat(plugin.plugin(pluginId()).map(PluginWrapper::getPluginState))
        .hasValueSatisfying(state -> assertThat(state).isNotEqualTo(PluginState.STARTED));
  }

  /** Loads the packaged jar as an agent of the current version would; closed after the test. */
  protected final PluginJar load(Path pluginsDir) throws IOException {
    plugin = PluginJar.loadPackaged(pluginsDir);
    return plugin;
  }
}
