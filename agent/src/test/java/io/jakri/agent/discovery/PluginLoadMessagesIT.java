package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.PluginJars;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** PF4J's words for unusable jars become jakri's: what is wrong and what to do. */
class PluginLoadMessagesIT {

  private static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  @TempDir Path plugins;

  private String reason(PluginHandlerRegistry registry, String jar) {
    return registry.problems().stream()
        .filter(p -> p.jar().getFileName().toString().equals(jar))
        .map(PluginHandlerRegistry.LoadProblem::reason)
        .findFirst()
        .orElseThrow(() -> new AssertionError("no problem reported for " + jar));
  }

  @Test
  void garbageHalfAZipAndIdlessJarsSayWhatTheyLack() throws Exception {
    Files.write(plugins.resolve("garbage.jar"), new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
    Files.write(plugins.resolve("halfzip.jar"), new byte[] {'P', 'K', 3, 4, 'x', 'y'});
    PluginJars.jar(
        plugins.resolve("no-id.jar"),
        Map.of("Implementation-Title", "x"),
        Map.of("a.txt", new byte[] {1}));
    try (PluginHandlerRegistry registry = new PluginHandlerRegistry(plugins, "0.1.0")) {
      registry.loadAll();
      assertThat(reason(registry, "garbage.jar")).startsWith("not a readable jar (zip) file");
      assertThat(reason(registry, "halfzip.jar")).startsWith("not a readable jar (zip) file");
      assertThat(reason(registry, "no-id.jar"))
          .startsWith("not a handler plugin: its manifest has no Plugin-Id");
      assertThat(registry.problems())
          .extracting(PluginHandlerRegistry.LoadProblem::reason)
          .noneMatch(r -> r.contains("PluginDescriptorFinder") || r.contains("\n"));
    }
  }

  @Test
  void aSecondCopyOfALoadedPluginNamesTheJarThatHasIt() throws Exception {
    Files.copy(
        PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    Files.copy(
        PLUGINS.resolve("jakri-handler-simulated.jar"), plugins.resolve("simulated-copy.jar"));
    try (PluginHandlerRegistry registry = new PluginHandlerRegistry(plugins, "0.1.0")) {
      registry.loadAll();
      assertThat(registry.names()).contains("simulated", "debugEcho");
      assertThat(reason(registry, "simulated-copy.jar"))
          .isEqualTo(
              "plugin id \"simulated\" is already loaded from jakri-handler-simulated.jar; this jar"
                  + " is ignored (remove one of the two, or give one another Plugin-Id)");
    }
  }
}
