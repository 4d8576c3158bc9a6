package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import ch.qos.logback.classic.spi.ILoggingEvent;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.Agent;
import io.jakri.agent.LogCapture;
import io.jakri.agent.cdi.CdiNames;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.DeviceSpecInfo;
import io.jakri.kubelet.emulator.MountInfo;
import io.jakri.kubelet.emulator.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * An Akri-protocol handler (the Python peer of {@link AkriProtocolIT}) reports devices with hostile
 * mounts and device nodes beside good ones: only the good ones reach the Allocate answer and the
 * CDI spec, each device's refusal is logged once (also when the snapshot comes again) and the
 * refused entries are counted by kind.
 */
class ExternalHandlerHostileEntriesIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path root;

  private static Map<String, Object> mount(String container, String host, boolean readOnly) {
    return Map.of("containerPath", container, "hostPath", host, "readOnly", readOnly);
  }

  private static Map<String, Object> node(String container, String host, String permissions) {
    return Map.of("containerPath", container, "hostPath", host, "permissions", permissions);
  }

  private static Map<String, Object> device(
      String id, List<Map<String, Object>> mounts, List<Map<String, Object>> nodes) {
    return Map.of("id", id, "properties", Map.of("ID", id), "mounts", mounts, "deviceSpecs", nodes);
  }

  /** cam0: 6 hostile mounts, 4 hostile device nodes; cam1: 1 hostile mount; each a good one. */
  private static List<Map<String, Object>> hostileDevices() {
    return List.of(
        device(
            "cam0",
            List.of(
                mount("/etc", "/", false),
                mount("/x1", "/etc/../etc/shadow", false),
                mount("/x2", "/var/lib/kubelet", false),
                mount("relative", "/opt/a", false),
                mount("/x3", "", false),
                mount("/x4", "/opt/a\0b", false),
                mount("/data", "/opt/data", true)),
            List.of(
                node("/dev/p", "/dev/../etc/passwd", "rw"),
                node("/dev/q", "/etc/passwd", "rw"),
                node("/dev/r", "/dev/r", "rwxz"),
                node("/dev/s", "/dev/s", ""),
                node("/dev/video0", "/dev/video0", "rw"))),
        device(
            "cam1",
            List.of(mount("/host", "/", false), mount("/cfg", "/srv/cfg", true)),
            List.of(node("/dev/video1", "/dev/video1", "r"))));
  }

  @Test
  void hostileMountsAndDeviceNodesReachNeitherAllocateNorTheCdiSpec() throws Exception {
    AkriPeer.generate();
    Path akri = root.resolve("akri");
    Path cdi = root.resolve("cdi");
    Agent agent = AkriProtocolIT.start(root, akri, o -> o.withCdi(Optional.of(cdi)));
    try (LogCapture log = LogCapture.of(DiscoveryManager.class);
        AkriPeer peer =
            AkriPeer.uds(akri, "pyhostile", "pyhostile.sock", false, Duration.ofSeconds(1))) {
      peer.awaitRegistered();
      peer.send(JSON.writeValueAsString(Map.of("devices", hostileDevices())));
      AkriProtocolIT.writeConfig(root, "hostile-cfg", "pyhostile", "{}", "");
      String cam0 = AkriProtocolIT.resource("hostile-cfg", "cam0", false);
      String cam1 = AkriProtocolIT.resource("hostile-cfg", "cam1", false);
      AkriProtocolIT.awaitHealthy(agent, cam0, 2);
      AkriProtocolIT.awaitHealthy(agent, cam1, 2);

      // The same devices again, with one more: processed, yet nothing is logged or counted twice.
      List<Map<String, Object>> again = new java.util.ArrayList<>(hostileDevices());
      again.add(device("cam2", List.of(), List.of()));
      peer.send(JSON.writeValueAsString(Map.of("devices", again)));
      AkriProtocolIT.awaitHealthy(agent, AkriProtocolIT.resource("hostile-cfg", "cam2", false), 2);

      ContainerAllocation given =
          AkriProtocolIT.kubelet(agent)
              .admit(Pod.of("default", "p", Container.of("c", cam0, 1)))
              .container("c");
      assertThat(given.mounts()).containsExactly(new MountInfo("/data", "/opt/data", true));
      assertThat(given.devices())
          .containsExactly(new DeviceSpecInfo("/dev/video0", "/dev/video0", "rw"));
      assertThat(given.cdiDevices()).hasSize(1);

      for (String resource : List.of(cam0, cam1)) {
        String instance = resource.substring("akri.sh/".length());
        byte[] bytes = Files.readAllBytes(cdi.resolve(CdiNames.specFileName(instance)));
        String text = new String(bytes, StandardCharsets.UTF_8);
        assertThat(text)
            .doesNotContain("shadow")
            .doesNotContain("passwd")
            .doesNotContain("kubelet")
            .doesNotContain("\"hostPath\":\"/\"")
            .doesNotContain("/dev/r\"")
            .doesNotContain("/dev/s\"");
        JsonNode edits = JSON.readTree(bytes).path("containerEdits");
        if (resource.equals(cam0)) {
          assertThat(edits.path("mounts").findValuesAsText("hostPath"))
              .containsExactly("/opt/data");
          assertThat(edits.path("deviceNodes").findValuesAsText("path"))
              .containsExactly("/dev/video0");
        } else {
          assertThat(edits.path("mounts").findValuesAsText("hostPath")).containsExactly("/srv/cfg");
          assertThat(edits.path("deviceNodes").findValuesAsText("hostPath"))
              .containsExactly("/dev/video1");
        }
      }

      String metrics = agent.metrics().scrape();
      assertThat(metrics)
          .contains("jakri_refused_container_entries_total{kind=\"mount\"} 7.0")
          .contains("jakri_refused_container_entries_total{kind=\"device\"} 4.0");

      List<ILoggingEvent> refusals =
          log.events().stream()
              .filter(e -> e.getFormattedMessage().contains(" refused, the device is served"))
              .toList();
      assertThat(refusals).hasSize(2);
      assertThat(refusals)
          .allSatisfy(
              e -> {
                assertThat(e.getLevel()).isEqualTo(Level.WARN);
                assertThat(e.getThrowableProxy()).isNull();
                assertThat(e.getFormattedMessage()).hasSizeLessThan(1200).doesNotContain("\n");
              });
      assertThat(refusals)
          .filteredOn(e -> e.getFormattedMessage().contains("(id \"cam0\")"))
          .singleElement()
          .extracting(ILoggingEvent::getFormattedMessage)
          .asString()
          .contains("10 entries refused")
          .contains("and 7 more");
      assertThat(refusals)
          .filteredOn(e -> e.getFormattedMessage().contains("(id \"cam1\")"))
          .singleElement()
          .extracting(ILoggingEvent::getFormattedMessage)
          .asString()
          .contains("1 entry refused")
          .contains("host's root");
      Files.delete(root.resolve("config").resolve("hostile-cfg.yaml"));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> !agent.devicePlugins().served().contains(cam0));
    } finally {
      agent.close();
    }
  }
}
