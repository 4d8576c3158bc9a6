package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.opcua.OpcuaPeers;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent (standalone, kubelet emulated, the opcua plugin jar from {@code
 * agent/target/plugins}) against real node-opcua servers ({@link OpcuaPeers} from the opcua
 * handler's test-jar): Akri's OPC UA Configuration → FindServers → Instance → device plugin →
 * kubelet → container env, and back out when the server stops.
 *
 * <p>Without node or the node-opcua modules the tests are skipped, except when {@code CI=true}:
 * then they fail. Each test runs its own agent in a temp dir; the peers run once for the class.
 */
class OpcuaAgentIT {

  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final Duration OFFLINE_GRACE = Duration.ofSeconds(3);

  private static OpcuaPeers peers;
  private static OpcuaPeers.Peer lds;
  private static OpcuaPeers.Peer plc;
  private static Path plugins;

  @TempDir Path root;
  private HandlerAgent agent;
  private KubeletEmulator kubelet;

  @BeforeAll
  static void startPeers() throws Exception {
    plugins = HandlerAgent.plugins("opcua", "io/jakri/handler/opcua/OpcuaHandler.class");
    try {
      peers = OpcuaPeers.create();
      lds = peers.lds("it-lds");
      peers.awaitReady(lds);
      plc = peers.server("Boiler 1", Optional.empty(), Optional.of(lds));
      peers.awaitReady(plc);
    } catch (OpcuaPeers.Unavailable e) {
      HandlerAgent.peerUnavailable(
          "no node-opcua peers, opcua agent IT not run: " + e.getMessage());
    }
  }

  @AfterAll
  static void stopPeers() {
    if (peers != null) {
      peers.close();
    }
  }

  @BeforeEach
  void startAgent() throws IOException {
    agent = HandlerAgent.start(root, plugins, OFFLINE_GRACE);
    kubelet = agent.kubelet();
  }

  @AfterEach
  void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  /** Akri's OPC UA Configuration (its Helm chart's details), polling every second. */
  private void configure(String name, String discoveryUrl) throws IOException {
    agent.writeConfiguration(
        name,
        """
        apiVersion: akri.sh/v0
        kind: Configuration
        metadata:
          name: %s
        spec:
          capacity: 1
          discoveryHandler:
            name: opcua
            discoveryDetails: |+
              opcuaDiscoveryMethod:
                standard:
                  discoveryUrls:
                  - %s
              applicationNames:
                action: Exclude
                items: []
              pollIntervalSeconds: 1
          brokerProperties:
            IDENTIFIER: "Thermometer_Temperature"
            NAMESPACE_INDEX: "2"
        """
            .formatted(name, discoveryUrl));
  }

  /** The Instance name the agent gives a server: shared device, id = its discovery URL. */
  private static String instanceOf(String configuration, String url) {
    return InstanceNames.instanceName(configuration, url, true, "unused-for-shared");
  }

  @Test
  void serverRegisteredWithTheLdsBecomesAnInstanceWhosePodGetsItsDiscoveryUrl() throws Exception {
    String configuration = "opcua-env";
    configure(configuration, lds.url());
    String url = plc.advertisedUrl();
    String instance = instanceOf(configuration, url);
    String resource = "akri.sh/" + instance;
    assertThat(resource).matches("akri\\.sh/opcua-env-[0-9a-f]{6}");

    agent.awaitAdvertised(resource, APPEAR);
    assertThat(kubelet.devices(resource)).containsExactly(Map.entry(instance + "-0", "Healthy"));
    // The LDS itself is never a device: one Instance only.
    assertThat(agent.agent().instances().list())
        .extracting(Instance::name)
        .containsExactly(instance);

    Map<String, String> env = agent.admit(resource).container("c").envs();
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(env)
        .containsEntry("OPCUA_DISCOVERY_URL", url)
        .containsEntry("OPCUA_DISCOVERY_URL_" + hash, url)
        .containsEntry("IDENTIFIER", "Thermometer_Temperature")
        .containsEntry("NAMESPACE_INDEX", "2");
  }

  @Test
  void stoppedServerTurnsUnhealthyAtTheNextPollThenItsInstanceLeavesAfterTheOfflineGrace()
      throws Exception {
    OpcuaPeers.Peer leaving = peers.server("leaving", Optional.empty(), Optional.empty());
    peers.awaitReady(leaving);
    String configuration = "opcua-leave";
    configure(configuration, leaving.url());
    String instance = instanceOf(configuration, leaving.advertisedUrl());
    String resource = "akri.sh/" + instance;
    agent.awaitAdvertised(resource, APPEAR);

    long stopped = System.nanoTime();
    leaving.kill();
    long unhealthyAt = agent.awaitUnhealthy(resource, APPEAR).nanos();
    assertThat(agent.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    long endedAt = agent.awaitRetired(resource, instance, APPEAR);
    assertThat(agent.agent().instances().list()).isEmpty();
    long unhealthyMs = HandlerAgent.millis(stopped, unhealthyAt);
    long retiredMs = HandlerAgent.millis(stopped, endedAt);
    System.out.println(
        "OPCUA_AGENT_REMOVAL unhealthy_ms="
            + unhealthyMs
            + " retired_ms="
            + retiredMs
            + " poll_interval_ms=1000 offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
    assertThat(retiredMs).isGreaterThanOrEqualTo(OFFLINE_GRACE.toMillis());
  }
}
