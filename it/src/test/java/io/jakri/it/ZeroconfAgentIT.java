package io.jakri.it;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceNames;
import io.jakri.agent.instance.StoreException;
import io.jakri.handler.zeroconf.AvahiPeer;
import io.jakri.handler.zeroconf.BareJmdns;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.emulator.PodAdmission;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.zip.ZipFile;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assertions;
import org.junit.jupiter.api.Assumptions;
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
  private static final String NODE = "node-it";
  private static final String ZEROCONF_HANDLER_CLASS =
      "io/jakri/handler/zeroconf/ZeroconfHandler.class";

  private static AvahiPeer peer;
  private static Path plugins;

  @TempDir Path root;
  private Agent agent;
  private KubeletEmulator kubelet;
  private final Events events = new Events();
  private final List<AutoCloseable> cleanUp = new ArrayList<>();

  /** What the emulated kubelet saw, with {@link System#nanoTime()} stamps. Thread-safe. */
  private static final class Events implements EmulatorListener {
    record Snapshot(String resource, Map<String, String> devices, long nanos) {}

    final List<Snapshot> snapshots = new CopyOnWriteArrayList<>();
    final Map<String, Long> streamEndedAt = new ConcurrentHashMap<>();

    @Override
    public void snapshot(String resource, Map<String, String> devices) {
      snapshots.add(new Snapshot(resource, Map.copyOf(devices), System.nanoTime()));
    }

    @Override
    public void streamEnded(String resource) {
      streamEndedAt.putIfAbsent(resource, System.nanoTime());
    }

    /** The first snapshot of {@code resource} listing a device in {@code health}, if any. */
    Optional<Snapshot> first(String resource, String health) {
      return snapshots.stream()
          .filter(s -> s.resource().equals(resource))
          .filter(s -> !s.devices().isEmpty() && s.devices().containsValue(health))
          .findFirst();
    }
  }

  @BeforeAll
  static void startPeer() throws Exception {
    String dir = System.getProperty("jakri.plugins.dir");
    assertThat(dir).as("system property jakri.plugins.dir (set by the it pom)").isNotNull();
    plugins = Path.of(dir).toAbsolutePath().normalize();
    Path zeroconfJar = plugins.resolve("jakri-handler-zeroconf.jar");
    assertThat(zeroconfJar).as("zeroconf plugin jar; build the agent module first").exists();
    try (ZipFile jar = new ZipFile(zeroconfJar.toFile())) {
      assertThat(jar.getEntry(ZEROCONF_HANDLER_CLASS))
          .as("%s holds the zeroconf handler (a stale jar? rebuild the agent module)", zeroconfJar)
          .isNotNull();
    }
    try {
      peer = AvahiPeer.start();
    } catch (AvahiPeer.Unavailable e) {
      String message = "no avahi peer, zeroconf agent IT not run: " + e.getMessage();
      if ("true".equals(System.getenv("CI"))) {
        Assertions.fail(message);
      }
      Assumptions.abort(message);
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
    Files.createDirectories(root.resolve("config"));
    agent =
        Agent.start(
            new AgentOptions(
                NODE,
                true,
                Optional.of(root.resolve("config")),
                true,
                root.resolve("device-plugins"),
                root.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                OFFLINE_GRACE));
    kubelet = agent.emulator().orElseThrow();
    kubelet.addListener(events);
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
    String yaml =
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
            .formatted(name, type, peer.hostAddress());
    Path dir = root.resolve("config");
    Path tmp = dir.resolve("." + name + ".yaml.tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
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

  private static String hashSuffix(String instance) {
    return instance.substring(instance.length() - 6).toUpperCase(Locale.ROOT);
  }

  private void awaitAdvertised(String resource) {
    await("capacity and allocatable 1 of " + resource)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                kubelet.capacity().getOrDefault(resource, -1L) == 1
                    && kubelet.allocatable().getOrDefault(resource, -1L) == 1);
  }

  /** Waits until the Instance carries {@code property} (TXT data may come in a later resolve). */
  private Instance awaitInstanceProperty(String instance, String property) throws StoreException {
    await("property " + property + " of Instance " + instance)
        .atMost(APPEAR)
        .until(
            () ->
                agent
                    .instances()
                    .get(instance)
                    .map(i -> i.brokerProperties().containsKey(property))
                    .orElse(false));
    return agent.instances().get(instance).orElseThrow();
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
                events.first(resource, "Healthy").isPresent()
                    && bare.resolvedAt("Widget 1").isPresent());
    long advertisedMs =
        TimeUnit.NANOSECONDS.toMillis(
            events.first(resource, "Healthy").orElseThrow().nanos() - widget.startedNanos);
    long bareMs =
        TimeUnit.NANOSECONDS.toMillis(
            bare.resolvedAt("Widget 1").orElseThrow() - widget.startedNanos);
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

    PodAdmission pod = kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1)));
    String hash = hashSuffix(instance);
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

    Map<String, String> env =
        kubelet.admit(Pod.of("default", "p", Container.of("c", resource, 1))).container("c").envs();
    String hash = hashSuffix(instance);
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
    assertThat(agent.instances().list()).extracting(Instance::name).containsExactly(instance);

    long stopped = System.nanoTime();
    leaving.close();
    await("unhealthy snapshot of " + resource)
        .atMost(DISAPPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(() -> events.first(resource, "Unhealthy").isPresent());
    // Still listed (capacity kept), no longer allocatable.
    assertThat(events.first(resource, "Unhealthy").orElseThrow().devices())
        .containsExactly(Map.entry(instance + "-0", "Unhealthy"));
    await("allocatable 0 of " + resource)
        .atMost(APPEAR)
        .until(() -> kubelet.allocatable().getOrDefault(resource, -1L) == 0);

    await("retirement of " + resource)
        .atMost(DISAPPEAR)
        .pollInterval(Duration.ofMillis(20))
        .until(
            () ->
                !agent.devicePlugins().served().contains(resource)
                    && agent.instances().list().isEmpty());
    assertThat(agent.devicePlugins().socketOf(resource)).isEmpty();
    await("end of the ListAndWatch stream of " + resource)
        .atMost(APPEAR)
        .until(() -> events.streamEndedAt.containsKey(resource));

    long unhealthyAt = events.first(resource, "Unhealthy").orElseThrow().nanos();
    long endedAt = events.streamEndedAt.get(resource);
    // The grace counts from when the agent saw the service go, which precedes the unhealthy
    // snapshot; half the grace leaves room for that snapshot's own delay.
    assertThat(Duration.ofNanos(endedAt - unhealthyAt))
        .as("time between unhealthy and retired")
        .isGreaterThanOrEqualTo(OFFLINE_GRACE.dividedBy(2));
    System.out.println(
        "ZEROCONF_AGENT_REMOVAL unhealthy_ms="
            + TimeUnit.NANOSECONDS.toMillis(unhealthyAt - stopped)
            + " retired_ms="
            + TimeUnit.NANOSECONDS.toMillis(endedAt - stopped)
            + " offline_grace_ms="
            + OFFLINE_GRACE.toMillis());
  }
}
