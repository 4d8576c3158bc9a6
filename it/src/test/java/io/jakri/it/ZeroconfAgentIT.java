package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.zeroconf.AvahiPeer;
import io.jakri.handler.zeroconf.BareJmdns;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The whole agent (standalone, kubelet emulated, handler plugins loaded from the jars the agent
 * build put in {@code agent/target/plugins}) against a real avahi-daemon publishing with {@code
 * avahi-publish -s}: service → Instance → device plugin → kubelet → container env, and back out.
 *
 * <p>Without a usable avahi peer (not root, tools missing) the tests are skipped, except when
 * {@code CI=true}: then they fail. Each test runs its own agent in a temp dir.
 */
class ZeroconfAgentIT {

  private static final Duration APPEAR = Duration.ofSeconds(30);
  private static final Duration DISAPPEAR = Duration.ofSeconds(60);
  private static final Duration OFFLINE_GRACE = Duration.ofSeconds(3);

  private static AvahiPeer peer;
  private static Path plugins;

  @TempDir Path root;
  private HandlerAgent agent;
  private KubeletEmulator kubelet;
  private final List<AutoCloseable> cleanUp = new ArrayList<>();

  @BeforeAll
  static void startPeer() throws Exception {
    plugins = HandlerAgent.plugins("zeroconf", "io/jakri/handler/zeroconf/ZeroconfHandler.class");
    try {
      peer = AvahiPeer.start();
    } catch (AvahiPeer.Unavailable e) {
      HandlerAgent.peerUnavailable("no avahi peer, zeroconf agent IT not run: " + e.getMessage());
    }
  }

  @AfterAll
  static void stopPeer() {
    if (peer != null) {
      peer.close();
    }
  }

  @BeforeEach
  void startAgent() throws IOException {
    agent = HandlerAgent.start(root, plugins, OFFLINE_GRACE);
    kubelet = agent.kubelet();
  }

  @AfterEach
  void stopAll() throws Exception {
    for (int i = cleanUp.size() - 1; i >= 0; i--) {
      cleanUp.get(i).close();
    }
    if (agent != null) {
      agent.close();
    }
  }

  /** Writes a zeroconf Configuration (capacity 1) browsing {@code type} on the veth address. */
  private void configure(String name, String type) throws IOException {
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
            name: zeroconf
            discoveryDetails: |
              kind: %s
              interfaces: [%s]
        """
            .formatted(name, type, peer.hostAddress()));
  }

  private AvahiPeer.Published publish(String name, String type, int port, String... txt)
      throws IOException {
    AvahiPeer.Published published = peer.publish(name, type, port, List.of(txt));
    cleanUp.add(published);
    return published;
  }

  /** The Instance name the agent gives the service: shared device, id = DNS-SD instance name. */
  private static String instanceOf(String configuration, String service, String type) {
    return InstanceNames.instanceName(
        configuration, service + "." + type + ".local", true, "unused-for-shared");
  }

  private void awaitAdvertised(String resource) {
    agent.awaitAdvertised(resource, APPEAR);
  }

  /** Waits until the Instance carries {@code property} (TXT data may come in a later resolve). */
  private Instance awaitInstanceProperty(String instance, String property) throws StoreException {
    await("property " + property + " of Instance " + instance)
        .atMost(APPEAR)
        .until(
            () ->
                agent
                    .agent()
                    .instances()
                    .get(instance)
                    .map(i -> i.brokerProperties().containsKey(property))
                    .orElse(false));
    return agent.agent().instances().get(instance).orElseThrow();
  }

  @Test
  void publishedServiceBecomesAnInstanceWhosePodEnvCarriesItsPropertiesWithAndWithoutHash()
      throws Exception {
    String configuration = "zc-env";
    String type = "_jkagent._tcp";
    configure(configuration, type);
    BareJmdns bare = new BareJmdns(peer.hostAddress(), type);
    cleanUp.add(bare);
    // Timing starts only once both the agent's discovery and the bare browser are up.
    publish("warm-up", type, 9000);
    awaitAdvertised("akri.sh/" + instanceOf(configuration, "warm-up", type));
    await("bare JmDNS warm-up").atMost(APPEAR).until(() -> bare.resolvedAt("warm-up").isPresent());

    String instance = instanceOf(configuration, "Widget 1", type);
    String resource = "akri.sh/" + instance;
    assertThat(resource).matches("akri\\.sh/zc-env-[0-9a-f]{6}");
    AvahiPeer.Published widget =
        publish("Widget 1", type, 8080, "model=x1", "serial=0042", "with-dash=yes");
    await("first snapshot of " + resource + " and bare JmDNS resolve")
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(10))
        .until(
            () ->
                agent.first(resource, "Healthy").isPresent()
                    && bare.resolvedAt("Widget 1").isPresent());
    long advertisedMs =
        HandlerAgent.millis(
            widget.startedNanos, agent.first(resource, "Healthy").orElseThrow().nanos());
    long bareMs =
        HandlerAgent.millis(widget.startedNanos, bare.resolvedAt("Widget 1").orElseThrow());
    System.out.println(
        "ZEROCONF_AGENT_TIMING publish_to_advertised_ms="
            + advertisedMs
            + " bare_jmdns_resolve_ms="
            + bareMs
            + " agent_overhead_ms="
            + (advertisedMs - bareMs));

    awaitAdvertised(resource);
    assertThat(kubelet.devices(resource)).containsExactly(Map.entry(instance + "-0", "Healthy"));
    awaitInstanceProperty(instance, "AKRI_ZEROCONF_DEVICE_MODEL");

    PodAdmission pod = agent.admit(resource);
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(pod.container("c").deviceIds(resource)).containsExactly(instance + "-0");
    assertThat(pod.container("c").envs())
        .containsEntry("AKRI_ZEROCONF_DEVICE_NAME", "Widget 1")
        .containsEntry("AKRI_ZEROCONF_DEVICE_NAME_" + hash, "Widget 1")
        .containsEntry("AKRI_ZEROCONF_DEVICE_PORT", "8080")
        .containsEntry("AKRI_ZEROCONF_DEVICE_PORT_" + hash, "8080")
        .containsEntry("AKRI_ZEROCONF_DEVICE_MODEL", "x1")
        .containsEntry("AKRI_ZEROCONF_DEVICE_MODEL_" + hash, "x1")
        .containsEntry("AKRI_ZEROCONF_DEVICE_SERIAL", "0042")
        .containsEntry("AKRI_ZEROCONF_DEVICE_WITH_DASH_" + hash, "yes")
        .containsEntry("AKRI_ZEROCONF_DEVICE_ADDR", peer.peerAddress())
        .containsEntry("AKRI_ZEROCONF_DEVICE_HOST", peer.peerHostName() + ".local");
  }

  @Test
  void hostileTxtKeysNeverBecomeEnvVarsOfTheirOwn() throws Exception {
    String configuration = "zc-hostile";
    String type = "_jkagenthostile._tcp";
    configure(configuration, type);
    publish("hostile", type, 1, "LD_PRELOAD=/evil.so", "PATH=/x", "model=x1");
    String instance = instanceOf(configuration, "hostile", type);
    String resource = "akri.sh/" + instance;
    awaitAdvertised(resource);
    // The hostile TXT has arrived (under the prefix) before the pod is admitted.
    awaitInstanceProperty(instance, "AKRI_ZEROCONF_DEVICE_LD_PRELOAD");
    awaitInstanceProperty(instance, "AKRI_ZEROCONF_DEVICE_PATH");

    Map<String, String> env = agent.admit(resource).container("c").envs();
    String hash = HandlerAgent.hashSuffix(instance);
    assertThat(env)
        .containsEntry("AKRI_ZEROCONF_DEVICE_LD_PRELOAD", "/evil.so")
        .containsEntry("AKRI_ZEROCONF_DEVICE_PATH", "/x")
        .containsEntry("AKRI_ZEROCONF_DEVICE_MODEL_" + hash, "x1")
        .doesNotContainKeys("LD_PRELOAD", "PATH", "LD_PRELOAD_" + hash, "PATH_" + hash);
    assertThat(env.keySet()).allMatch(k -> k.startsWith("AKRI_ZEROCONF"));
  }

  @Test
  void stoppedServiceTurnsUnhealthyThenItsInstanceLeavesAfterTheOfflineGrace() throws Exception {
    String configuration = "zc-leave";
    String type = "_jkagentleave._tcp";
    configure(configuration, type);
    AvahiPeer.Published leaving = publish("leaves", type, 2);
    String instance = instanceOf(configuration, "leaves", type);
    String resource = "akri.sh/" + instance;
    awaitAdvertised(resource);
    assertThat(agent.agent().instances().list())
        .extracting(Instance::name)
        .containsExactly(instance);

    long stopped = System.nanoTime();
    leaving.close();
    long unhealthyAt = agent.awaitUnhealthy(resource, DISAPPEAR).nanos();
    // Still listed (capacity kept), no longer allocatable.
    assertThat(agent.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    await("allocatable 0 of " + resource)
        .atMost(APPEAR)
        .until(() -> kubelet.allocatable().getOrDefault(resource, -1L) == 0);

    long endedAt = agent.awaitRetired(resource, instance, DISAPPEAR);
    assertThat(agent.agent().instances().list()).isEmpty();
    assertThat(agent.agent().devicePlugins().socketOf(resource)).isEmpty();

    // The grace counts from when the agent saw the service go, which precedes the unhealthy
    // snapshot; half the grace leaves room for that snapshot's own delay.
    assertThat(Duration.ofNanos(endedAt - unhealthyAt))
        .as("time between unhealthy and retired")
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "ZEROCONF_AGENT_REMOVAL unhealthy_ms="
            + HandlerAgent.millis(stopped, unhealthyAt)
            + " retired_ms="
            + HandlerAgent.millis(stopped, endedAt)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
