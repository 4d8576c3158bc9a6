package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.PluginJars;
import java.nio.file.Path;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

/** {@link PluginJarCheck} on jars written as-is: every package tree of the agent is its own. */
class PluginJarCheckTest {

  @TempDir Path dir;

  private Path jarWith(String entry) throws Exception {
    return PluginJars.jar(
        dir.resolve("p.jar"),
        Map.of("Plugin-Id", "p", "Plugin-Version", "1.0.0"),
        Map.of(entry, new byte[] {1, 2, 3}));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "io/jakri/agent/model/LocalDevice.class",
        "io/jakri/agent/instance/LocalDevices.class",
        "io/jakri/agent/allocation/SlotClaims.class",
        "io/jakri/agent/controlplane/ClusterControlPlane.class",
        "io/jakri/agent/dra/ClaimPreparer.class",
        "io/jakri/agent/Agent.class"
      })
  void aClassInAnAgentPackageIsRefused(String entry) throws Exception {
    assertThat(PluginJarCheck.problem(jarWith(entry)))
        .hasValueSatisfying(
            p -> assertThat(p).startsWith("entry \"" + entry + "\" defines a class in "));
  }

  @Test
  void aClassInAPluginsOwnPackageIsLoaded() throws Exception {
    assertThat(PluginJarCheck.problem(jarWith("com/example/widgets/WidgetHandler.class")))
        .isEmpty();
  }
}
