package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.TestAgent;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Names as long as Kubernetes allows them still make sockets that bind: a Unix socket path holds at
 * most 107 bytes, and a class resource {@code example.com/<63 characters>} or an Instance of a
 * 56-character Configuration in a long device-plugin directory would not fit as they are.
 */
class LongNamesIT {

  @TempDir Path tmp;

  @Test
  void aLongConfigurationNameAndALongClassNameAreServedAndAllocated() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    String configuration = "c" + "-long-configuration-name".repeat(2) + "-abcdef"; // 56
    String className = "example.com/" + "k".repeat(63);
    assertThat(configuration).hasSize(56);
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      assertThat(
              a.devicePluginDir.toString().getBytes(StandardCharsets.UTF_8).length
                  + "/jakri-class-example.com_".length()
                  + 63
                  + "-1795523397.sock".length())
          .as("the class socket would not fit unshortened")
          .isGreaterThan(107);
      a.writeConfig(
          configuration,
          TestAgent.configuration(
              configuration, "simulated", 1, "count: 2\nresourceName: " + className));
      a.awaitAllocatable(className, 2, Duration.ofSeconds(30));
      List<String> instances =
          a.agent.instances().list().stream()
              .filter(i -> i.configurationName().equals(configuration))
              .map(i -> "akri.sh/" + i.name())
              .toList();
      assertThat(instances).hasSize(2);
      for (String instance : instances) {
        a.awaitAllocatable(instance, 1, Duration.ofSeconds(30));
      }

      var admitted = a.kubelet().admit(Pod.of("default", "p", Container.of("c", className, 1)));
      assertThat(admitted.container("c").envs()).isNotEmpty();

      List<String> sockets;
      try (Stream<Path> files = Files.list(a.devicePluginDir)) {
        sockets = files.map(p -> p.toString()).filter(p -> p.endsWith(".sock")).sorted().toList();
      }
      assertThat(sockets)
          .isNotEmpty()
          .allSatisfy(
              p -> assertThat(p.getBytes(StandardCharsets.UTF_8).length).isLessThanOrEqualTo(107));
    }
  }
}
