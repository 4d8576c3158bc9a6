package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The camera stand-in is what real ONVIF clients accept, not just what the handler expects: two
 * independent clients talk to it, Debian's {@code onvif-util} (libonvif, C++; it finds the camera
 * by its own WS-Discovery probe, then signs every call with a UsernameToken digest) and the npm
 * registry's {@code onvif} 0.8.3 (JavaScript, its own digest code). Both run as processes in a
 * client network namespace on the other end of the veth (onvif-util turns multicast loop-back off,
 * so it cannot share the camera's namespace). Missing tools or node modules skip the tests, and
 * fail them when {@code CI=true}.
 */
class OnvifClientsIT {

  private static final Duration RUN = Duration.ofSeconds(30);
  private static OnvifNetwork network;
  private OnvifNetwork.Camera camera;

  @BeforeAll
  static void setUp() {
    network = OnvifNetwork.startOrSkip(true, "ip", "python3", "onvif-util", "node");
  }

  @AfterAll
  static void tearDown() {
    if (network != null) {
      network.close();
    }
  }

  @AfterEach
  void stopCamera() {
    if (camera != null) {
      camera.close();
    }
  }

  private void startCamera() throws Exception {
    camera =
        network.camera(
            UUID.randomUUID().toString(),
            "--username",
            "admin",
            "--password",
            "pa55word",
            "--mac",
            "02:00:5e:00:53:42");
  }

  @Test
  void onvifUtilFindsTheStandInByProbeAndLogsInWithADigest() throws Exception {
    startCamera();
    OnvifNetwork.Peer util =
        network.spawnClient(
            "get time\nget network\nquit\n",
            "onvif-util",
            "-u",
            "admin",
            "-p",
            "pa55word",
            network.peerAddress);
    util.waitFor(RUN);
    assertThat(util.output())
        .as(util.output())
        .contains("found host: " + network.peerAddress)
        .contains("successfully connected to host")
        .contains("name:   StandIn")
        .contains("Time Set By: NTP")
        .contains("IP Address: " + network.peerAddress)
        .doesNotContain("ERROR");
    assertThat(camera.peer().output())
        .contains("probe from")
        .contains("UsernameToken for admin digest ok")
        .doesNotContain("UsernameToken for admin digest WRONG");

    OnvifNetwork.Peer wrong =
        network.spawnClient(
            "quit\n", "onvif-util", "-u", "admin", "-p", "not-it", network.peerAddress);
    wrong.waitFor(RUN);
    assertThat(wrong.output()).contains("ter:NotAuthorized");
    assertThat(camera.peer().output()).contains("UsernameToken for admin digest WRONG");
  }

  @Test
  void npmOnvifReadsTimeInterfacesAndDeviceInformation() throws Exception {
    if (!Files.isDirectory(OnvifNetwork.NODE_DIR.resolve("node_modules/onvif"))) {
      String message = "npm onvif not installed: npm ci --prefix handlers/onvif/src/test/node";
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
    }
    startCamera();
    String script = OnvifNetwork.NODE_DIR.resolve("check-camera.js").toString();
    String port = String.valueOf(camera.port());
    OnvifNetwork.Peer ok =
        network.spawnClient(null, "node", script, network.peerAddress, port, "admin", "pa55word");
    ok.waitFor(RUN);
    assertThat(ok.output())
        .as(ok.output())
        .contains("\"mac\":\"02:00:5e:00:53:42\"")
        .contains("\"ip\":\"" + network.peerAddress + "\"")
        .contains("\"manufacturer\":\"jakri\"")
        .doesNotContain("error");

    OnvifNetwork.Peer wrong =
        network.spawnClient(null, "node", script, network.peerAddress, port, "admin", "nope");
    wrong.waitFor(RUN);
    assertThat(wrong.output()).contains("\"error\"").contains("Sender not Authorized");
    assertThat(camera.peer().output())
        .contains("UsernameToken for admin digest ok")
        .contains("UsernameToken for admin digest WRONG");
  }
}
