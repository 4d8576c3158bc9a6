package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Base64;
import java.util.Optional;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent against a discovery handler written in Python with another gRPC stack ({@link
 * AkriPeer}), over Akri's protocol: UDS and NETWORK endpoints, details and byte properties, shared
 * and unshared names, snapshot changes, a crash and return, a frozen (SIGSTOP) handler and an idle
 * one under keepalive PINGs, two endpoints under one name, InvalidArgument, the plugin/external
 * name rule. One agent for the class; the agent restart test runs its own.
 */
class AkriProtocolIT {

  static final String NODE = "protocol-node";
  static final Duration GRACE = Duration.ofSeconds(3);

  /** gRPC's floor: the shortest keepalive time there is. */
  static final Duration KEEPALIVE = ExternalHandlers.Settings.MIN_KEEPALIVE;

  static final ExternalHandlers.Settings SETTINGS =
      new ExternalHandlers.Settings(
          Duration.ofSeconds(3),
          Duration.ofSeconds(3),
          Duration.ofSeconds(2),
          50,
          KEEPALIVE,
          Duration.ofSeconds(2));
  static final Duration REGISTER_INTERVAL = Duration.ofSeconds(1);

  @TempDir static Path root;
  static Agent agent;
  static Path akri;

  @BeforeAll
  static void startAgent() throws Exception {
    AkriPeer.generate();
    akri = root.resolve("akri");
    agent = start(root, akri);
  }

  @AfterAll
  static void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  static Agent start(Path dir, Path akriDir) throws IOException {
    return start(dir, akriDir, o -> o);
  }

  /** As above, with the options changed by {@code adjust} (e.g. CDI turned on). */
  static Agent start(Path dir, Path akriDir, java.util.function.UnaryOperator<AgentOptions> adjust)
      throws IOException {
    Files.createDirectories(dir.resolve("config"));
    AgentOptions options =
        new AgentOptions(
                NODE,
                true,
                Optional.of(dir.resolve("config")),
                true,
                dir.resolve("device-plugins"),
                dir.resolve("pod-resources").resolve("kubelet.sock"),
                Path.of("target", "plugins").toAbsolutePath(),
                GRACE)
            .withExternalHandlers(Optional.of(new ExternalHandlers.Options(akriDir, SETTINGS)));
    return Agent.start(adjust.apply(options));
  }

  static void writeConfig(Path dir, String name, String handler, String details, String props)
      throws IOException {
    String yaml =
        "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata:\n  name: "
            + name
            + "\nspec:\n  capacity: 2\n  discoveryHandler:\n    name: "
            + handler
            + "\n    discoveryDetails: |\n      "
            + details
            + "\n"
            + props;
    Path tmp = dir.resolve("config").resolve("." + name + ".tmp");
    Files.writeString(tmp, yaml, StandardCharsets.UTF_8);
    Files.move(
        tmp,
        dir.resolve("config").resolve(name + ".yaml"),
        StandardCopyOption.ATOMIC_MOVE,
        StandardCopyOption.REPLACE_EXISTING);
  }

  static KubeletEmulator kubelet(Agent a) {
    return EmulatedKubelet.of(a).orElseThrow();
  }

  static String resource(String config, String id, boolean shared) {
    return "akri.sh/" + InstanceNames.instanceName(config, id, shared, NODE);
  }

  static void awaitHealthy(Agent a, String resource, long healthy) {
    await()
        .atMost(Duration.ofSeconds(20))
        .pollInterval(Duration.ofMillis(10))
        .until(() -> kubelet(a).allocatable().getOrDefault(resource, -1L) == healthy);
  }

  /** No longer served by the agent (the kubelet keeps a retired resource for a while). */
  static void awaitGone(Agent a, String resource) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                !a.devicePlugins().served().contains(resource)
                    && kubelet(a).allocatable().getOrDefault(resource, 0L) == 0L);
  }

  @Test
  void udsHandlerGetsDetailsAndBytePropertiesAndItsDevicesAreAdvertised() throws Exception {
    try (AkriPeer peer = AkriPeer.uds(akri, "pyuds", "pyuds.sock", false, REGISTER_INTERVAL)) {
      peer.awaitRegistered();
      peer.send(
          "{\"devices\": [{\"id\": \"/dev/video0\", \"properties\": {\"UDEV_DEVNODE\":"
              + " \"/dev/video0\"}, \"mounts\": [{\"containerPath\": \"/c\", \"hostPath\":"
              + " \"/h\", \"readOnly\": true}], \"deviceSpecs\": [{\"containerPath\":"
              + " \"/dev/v\", \"hostPath\": \"/dev/video0\", \"permissions\": \"r\"}]}]}");
      writeConfig(
          root,
          "pyuds-cfg",
          "pyuds",
          "descriptions: [\"a\"]",
          "    discoveryProperties:\n    - name: token\n      value: \"s3cr\u00e9t\"\n");
      String res = resource("pyuds-cfg", "/dev/video0", false);
      awaitHealthy(agent, res, 2);

      JsonNode discover = peer.awaitEvent("discover", e -> true);
      assertThat(discover.path("details").asText()).isEqualTo("descriptions: [\"a\"]\n");
      byte[] token = Base64.getDecoder().decode(discover.path("properties").path("token").asText());
      assertThat(token).isEqualTo("s3cr\u00e9t".getBytes(StandardCharsets.UTF_8));

      LocalDevice local =
          agent.localDevices().get(res.substring("akri.sh/".length())).orElseThrow();
      assertThat(local.device().properties()).containsEntry("UDEV_DEVNODE", "/dev/video0");
      assertThat(local.device().mounts())
          .containsExactly(new DiscoveredDevice.Mount("/c", "/h", true));
      assertThat(local.device().deviceSpecs())
          .containsExactly(new DiscoveredDevice.DeviceSpec("/dev/v", "/dev/video0", "r"));
      assertThat(local.device().shared()).isFalse();
      assertThat(Files.getPosixFilePermissions(akri.resolve(ExternalHandlers.SOCKET_NAME)))
          .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));

      // snapshot changes: a device appears, the first vanishes (unhealthy, then gone)
      peer.devices("/dev/video1");
      String res1 = resource("pyuds-cfg", "/dev/video1", false);
      awaitHealthy(agent, res1, 2);
      awaitHealthy(agent, res, 0);
      awaitGone(agent, res);
      Files.delete(root.resolve("config").resolve("pyuds-cfg.yaml"));
      awaitGone(agent, res1);
    }
  }

  @Test
  void sharedHandlerNamesInstancesWithoutTheNodeAndNetworkEndpointsWork() throws Exception {
    try (AkriPeer peer = AkriPeer.network(akri, "pynet", true, REGISTER_INTERVAL)) {
      JsonNode registered = peer.awaitRegistered();
      assertThat(registered.path("endpoint").asText()).startsWith("http://127.0.0.1:");
      peer.devices("rtsp://cam-1");
      writeConfig(root, "pynet-cfg", "pynet", "{}", "");
      String shared = resource("pynet-cfg", "rtsp://cam-1", true);
      assertThat(shared)
          .isEqualTo("akri.sh/pynet-cfg-" + InstanceNames.hash("rtsp://cam-1", Optional.empty()));
      awaitHealthy(agent, shared, 2);
      assertThat(agent.instances().get(shared.substring(8)).orElseThrow().shared()).isTrue();
      Files.delete(root.resolve("config").resolve("pynet-cfg.yaml"));
      awaitGone(agent, shared);
    }
  }

  @Test
  void twoEndpointsUnderOneNameAreMergedAndADroppedOnesDevicesTurnUnhealthy() throws Exception {
    try (AkriPeer first = AkriPeer.uds(akri, "pytwo", "pytwo-a.sock", false, REGISTER_INTERVAL);
        AkriPeer second = AkriPeer.uds(akri, "pytwo", "pytwo-b.sock", false, REGISTER_INTERVAL)) {
      first.awaitRegistered();
      second.awaitRegistered();
      first.devices("x");
      second.devices("x", "y");
      writeConfig(root, "pytwo-cfg", "pytwo", "{}", "");
      String x = resource("pytwo-cfg", "x", false);
      String y = resource("pytwo-cfg", "y", false);
      awaitHealthy(agent, x, 2);
      awaitHealthy(agent, y, 2);
      assertThat(first.events("discover")).hasSize(1);
      assertThat(second.events("discover")).hasSize(1);

      second.kill();
      // dropped after SETTINGS.dropAfter: y (only the second saw it) unhealthy; x stays
      awaitHealthy(agent, y, 0);
      assertThat(kubelet(agent).allocatable().get(x)).isEqualTo(2L);
      awaitGone(agent, y);
      assertThat(agent.externalHandlers().orElseThrow().endpoints())
          .extracting(ExternalEndpoint::endpoint)
          .contains(akri.resolve("pytwo-a.sock").toString())
          .doesNotContain(akri.resolve("pytwo-b.sock").toString());
      Files.delete(root.resolve("config").resolve("pytwo-cfg.yaml"));
      awaitGone(agent, x);
    }
  }

  @Test
  void aCrashedHandlerThatComesBackIsTakenBackAtOnce() throws Exception {
    String res = resource("pycrash-cfg", "d1", false);
    AkriPeer peer = AkriPeer.uds(akri, "pycrash", "pycrash.sock", false, REGISTER_INTERVAL);
    try {
      peer.awaitRegistered();
      peer.devices("d1");
      writeConfig(root, "pycrash-cfg", "pycrash", "{}", "");
      awaitHealthy(agent, res, 2);
      peer.kill();
    } finally {
      peer.close();
    }
    try (io.jakri.agent.LogCapture log = io.jakri.agent.LogCapture.of(ExternalDiscovery.class);
        AkriPeer back = AkriPeer.uds(akri, "pycrash", "pycrash.sock", false, REGISTER_INTERVAL)) {
      back.devices("d1", "d2");
      double registered = back.awaitRegistered().path("t").asDouble();
      double dialled = back.awaitEvent("discover", e -> true).path("t").asDouble();
      awaitHealthy(agent, resource("pycrash-cfg", "d2", false), 2);
      awaitHealthy(agent, res, 2);
      System.out.printf(
          "akri protocol: a crashed handler back: its registration answered -> its Discover called"
              + " (handler's clock): %.1f ms%n",
          (dialled - registered) * 1e3);
      // the dial its registration caused is not cancelled with the Register call's Context
      assertThat(log.messages())
          .filteredOn(m -> m.contains("pycrash"))
          .noneMatch(m -> m.contains("Context was cancelled"));
      Files.delete(root.resolve("config").resolve("pycrash-cfg.yaml"));
      awaitGone(agent, res);
    }
  }

  /**
   * A handler frozen with SIGSTOP keeps its connection open but answers nothing, not even HTTP/2
   * PINGs: it is dropped within {@link ExternalHandlers.Settings#dropBound} (one log line), its
   * device turns unhealthy at once and leaves after the grace; thawed (SIGCONT) it registers again
   * and is taken back at once. Meanwhile an idle but alive handler, pinged the same way for three
   * keepalive intervals, keeps its one stream and its healthy device.
   */
  @Test
  void aFrozenHandlerIsDroppedAndTakenBackWhileAnIdleOneStays() throws Exception {
    String idleRes = resource("pyidle-cfg", "i1", false);
    String frozenRes = resource("pyfrozen-cfg", "f1", false);
    java.util.List<String> idleNotHealthy = new java.util.concurrent.CopyOnWriteArrayList<>();
    io.jakri.kubelet.emulator.EmulatorListener watch =
        new io.jakri.kubelet.emulator.EmulatorListener() {
          @Override
          public void snapshot(String resource, java.util.Map<String, String> devices) {
            if (resource.equals(idleRes)
                && (devices.isEmpty() || !devices.values().stream().allMatch("Healthy"::equals))) {
              idleNotHealthy.add(devices.toString());
            }
          }
        };
    try (io.jakri.agent.LogCapture log = io.jakri.agent.LogCapture.of(ExternalHandlers.class);
        AkriPeer idle =
            AkriPeer.udsPermittingPings(akri, "pyidle", "pyidle.sock", REGISTER_INTERVAL);
        AkriPeer frozen =
            AkriPeer.udsPermittingPings(akri, "pyfrozen", "pyfrozen.sock", REGISTER_INTERVAL)) {
      idle.awaitRegistered();
      frozen.awaitRegistered();
      idle.devices("i1");
      frozen.devices("f1");
      writeConfig(root, "pyidle-cfg", "pyidle", "{}", "");
      writeConfig(root, "pyfrozen-cfg", "pyfrozen", "{}", "");
      awaitHealthy(agent, idleRes, 2);
      awaitHealthy(agent, frozenRes, 2);
      kubelet(agent).addListener(watch);
      long idleFrom = System.nanoTime();
      int registrations = frozen.events("registered").size();
      String frozenEndpoint = akri.resolve("pyfrozen.sock").toString();

      long frozenAt = System.nanoTime();
      frozen.freeze();
      long unhealthyAt;
      try {
        await()
            .atMost(SETTINGS.dropBound().plusSeconds(10))
            .pollInterval(Duration.ofMillis(10))
            .until(
                () -> {
                  java.util.Map<String, String> devices = kubelet(agent).devices(frozenRes);
                  return !devices.isEmpty()
                      && devices.values().stream().allMatch("Unhealthy"::equals);
                });
        unhealthyAt = System.nanoTime();
        assertThat(agent.externalHandlers().orElseThrow().endpoints())
            .extracting(ExternalEndpoint::endpoint)
            .doesNotContain(frozenEndpoint)
            .contains(akri.resolve("pyidle.sock").toString());
        assertThat(log.messages())
            .filteredOn(m -> m.contains("pyfrozen") && m.contains("dropped"))
            .singleElement()
            .asString()
            .contains(frozenEndpoint)
            .contains("Keepalive failed")
            .contains("no answer to the HTTP/2 handshake")
            .contains("its devices are unhealthy until it registers again");
        awaitGone(agent, frozenRes);
      } finally {
        frozen.thaw();
      }
      long thawedAt = System.nanoTime();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(() -> frozen.events("registered").size() > registrations);
      awaitHealthy(agent, frozenRes, 2);
      long backAt = System.nanoTime();

      // the idle handler: pinged for three keepalive intervals, never disconnected nor dropped
      Duration left = KEEPALIVE.multipliedBy(3).minusNanos(System.nanoTime() - idleFrom);
      if (!left.isNegative() && !left.isZero()) {
        await()
            .during(left)
            .atMost(left.plusSeconds(10))
            .until(
                () ->
                    kubelet(agent).allocatable().getOrDefault(idleRes, 0L) == 2
                        && agent.externalHandlers().orElseThrow().endpoints().stream()
                            .anyMatch(e -> e.name().equals("pyidle")));
      }
      assertThat(Duration.ofNanos(System.nanoTime() - idleFrom))
          .isGreaterThanOrEqualTo(KEEPALIVE.multipliedBy(3));
      assertThat(idle.events("stream-closed")).isEmpty();
      assertThat(idle.events("discover")).hasSize(1);
      assertThat(idleNotHealthy).isEmpty();
      assertThat(log.messages())
          .filteredOn(m -> m.contains("pyidle"))
          .noneMatch(m -> m.contains("dropped"));
      System.out.printf(
          "akri protocol: a handler frozen (SIGSTOP) -> its device unhealthy: %.0f ms (bound:"
              + " keepalive %d s + PING timeout %d s + drop after %d s + a handshake's %d s ="
              + " %d s); thawed (SIGCONT) -> healthy again: %.0f ms%n",
          (unhealthyAt - frozenAt) / 1e6,
          KEEPALIVE.toSeconds(),
          SETTINGS.keepaliveTimeout().toSeconds(),
          SETTINGS.dropAfter().toSeconds(),
          SETTINGS.keepaliveTimeout().toSeconds(),
          SETTINGS.dropBound().toSeconds(),
          (backAt - thawedAt) / 1e6);
      Files.delete(root.resolve("config").resolve("pyidle-cfg.yaml"));
      Files.delete(root.resolve("config").resolve("pyfrozen-cfg.yaml"));
      awaitGone(agent, idleRes);
      awaitGone(agent, frozenRes);
    } finally {
      kubelet(agent).removeListener(watch);
    }
  }

  @Test
  void invalidArgumentMarksTheConfigurationInvalid() throws Exception {
    try (AkriPeer peer =
        AkriPeer.uds(akri, "pyinvalid", "pyinvalid.sock", false, REGISTER_INTERVAL)) {
      peer.awaitRegistered();
      peer.send("{\"invalid\": \"descriptions must be a list\"}");
      writeConfig(root, "pyinvalid-cfg", "pyinvalid", "descriptions: 7", "");
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  Optional.ofNullable(agent.discovery().statuses().get("pyinvalid-cfg"))
                      .filter(s -> s.state() == DiscoveryManager.State.INVALID)
                      .isPresent());
      assertThat(agent.discovery().statuses().get("pyinvalid-cfg").message())
          .contains("InvalidArgument")
          .contains("descriptions must be a list");
      Files.delete(root.resolve("config").resolve("pyinvalid-cfg.yaml"));
    }
  }

  @Test
  void aRegisteredExternalHandlerServesAPluginsNameUntilItIsDropped() throws Exception {
    writeConfig(root, "shadow-cfg", "debugEcho", "descriptions: [\"foo\"]", "");
    String pluginDevice = resource("shadow-cfg", "foo", false);
    String shared = resource("shadow-cfg", "foo", true);
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                kubelet(agent).allocatable().getOrDefault(pluginDevice, 0L) == 2
                    || kubelet(agent).allocatable().getOrDefault(shared, 0L) == 2);
    String fromPlugin =
        kubelet(agent).allocatable().getOrDefault(pluginDevice, 0L) == 2 ? pluginDevice : shared;
    try (AkriPeer peer = AkriPeer.uds(akri, "debugEcho", "echo.sock", false, REGISTER_INTERVAL)) {
      peer.devices("python-foo");
      peer.awaitRegistered();
      String external = resource("shadow-cfg", "python-foo", false);
      awaitHealthy(agent, external, 2);
      assertThat(peer.awaitEvent("discover", e -> true).path("details").asText())
          .isEqualTo("descriptions: [\"foo\"]\n");
      awaitGone(agent, fromPlugin);
      peer.kill();
      // dropped: the plugin serves the name again
      awaitHealthy(agent, fromPlugin, 2);
      awaitGone(agent, external);
    } finally {
      Files.delete(root.resolve("config").resolve("shadow-cfg.yaml"));
    }
  }

  @Test
  void registrationsSurviveAnAgentRestart(@TempDir Path own) throws Exception {
    Path dir = own.resolve("akri");
    // The handler tries to register again only every minute: recovery comes from the agent. So
    // it starts once the first agent serves the registration socket (a first attempt before
    // that would leave it unregistered for a minute).
    Agent first = start(own, dir);
    AkriPeer handler;
    try {
      handler = AkriPeer.uds(dir, "pyrestart", "pyrestart.sock", false, Duration.ofSeconds(60));
    } catch (Exception | Error e) {
      first.close();
      throw e;
    }
    try (AkriPeer peer = handler) {
      String res = resource("pyrestart-cfg", "r1", false);
      String plugin = resource("pyrestart-plugin", "p1", false);
      try {
        peer.awaitRegistered();
        peer.devices("r1");
        writeConfig(own, "pyrestart-cfg", "pyrestart", "{}", "");
        writeConfig(
            own, "pyrestart-plugin", "simulated", "{descriptions: [\"p1\"], shared: false}", "");
        awaitHealthy(first, res, 2);
        awaitHealthy(first, plugin, 2);
      } finally {
        first.close();
      }
      // its stream ended: it tries to register again, fails (no agent) and waits a minute
      peer.awaitEvent("register-failed", e -> true);
      assertThat(dir.resolve(RegistrationFile.FILE_NAME)).exists();
      int registrations = peer.events("registered").size();
      long started = System.nanoTime();
      Agent second = start(own, dir);
      try {
        long[] seen = {0, 0};
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(5))
            .until(
                () -> {
                  java.util.Map<String, Long> now = kubelet(second).allocatable();
                  if (seen[0] == 0 && now.getOrDefault(res, 0L) == 2) {
                    seen[0] = System.nanoTime();
                  }
                  if (seen[1] == 0 && now.getOrDefault(plugin, 0L) == 2) {
                    seen[1] = System.nanoTime();
                  }
                  return seen[0] != 0 && seen[1] != 0;
                });
        assertThat(peer.events("registered")).hasSize(registrations);
        System.out.printf(
            "akri protocol: agent restart -> device advertised healthy again: external handler"
                + " (restored registration, the handler did not register again) %.0f ms; plugin"
                + " device in the same restart (floor) %.0f ms%n",
            (seen[0] - started) / 1e6, (seen[1] - started) / 1e6);
      } finally {
        second.close();
      }
    }
  }

  @Test
  void aHandlerThatNeverAnswersOrAnswersTooMuchIsBounded() throws Exception {
    try (AkriPeer peer =
        AkriPeer.uds(akri, "pysilent", "pysilent.sock", false, REGISTER_INTERVAL)) {
      peer.send("{\"silent\": true}");
      peer.awaitRegistered();
      long t0 = System.nanoTime();
      writeConfig(root, "pysilent-cfg", "pysilent", "{}", "");
      // start() waits at most SETTINGS.firstAnswer for a first answer, then discovery runs on
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  Optional.ofNullable(agent.discovery().statuses().get("pysilent-cfg"))
                      .filter(s -> s.state() == DiscoveryManager.State.DISCOVERING)
                      .isPresent());
      assertThat(Duration.ofNanos(System.nanoTime() - t0))
          .isLessThan(SETTINGS.firstAnswer().plusSeconds(5));
      peer.awaitEvent("discover", e -> true);
      assertThat(agent.discovery().statuses().get("pysilent-cfg").devices()).isZero();

      // a property of 1 MB is left out; the device and its other properties are taken
      peer.send(
          "{\"devices\": [{\"id\": \"big\", \"properties\": {\"BIG\": \""
              + "x".repeat(1024 * 1024)
              + "\", \"SMALL\": \"ok\"}}]}");
      String res = resource("pysilent-cfg", "big", false);
      awaitHealthy(agent, res, 2);
      assertThat(agent.localDevices().get(res.substring(8)).orElseThrow().device().properties())
          .isEqualTo(java.util.Map.of("SMALL", "ok"));
      Files.delete(root.resolve("config").resolve("pysilent-cfg.yaml"));
      awaitGone(agent, res);
    }
  }

  /**
   * The same device (id {@code foo}, unshared) through the simulated plugin and through the Python
   * handler: from the Configuration written to the kubelet's first ListAndWatch snapshot with it
   * healthy. Rounds alternate; the plugin is the floor measured in the same run.
   */
  @Test
  void discoveryToAdvertisedThroughTheProtocolNextToThePlugin() throws Exception {
    java.util.Map<String, Long> healthyAt = new java.util.concurrent.ConcurrentHashMap<>();
    io.jakri.kubelet.emulator.EmulatorListener listener =
        new io.jakri.kubelet.emulator.EmulatorListener() {
          @Override
          public void snapshot(String resource, java.util.Map<String, String> devices) {
            if (devices.containsValue("Healthy")) {
              healthyAt.putIfAbsent(resource, System.nanoTime());
            }
          }
        };
    kubelet(agent).addListener(listener);
    int rounds = Integer.getInteger("jakri.protocol.rounds", 8);
    java.util.List<Double> plugin = new java.util.ArrayList<>();
    java.util.List<Double> protocol = new java.util.ArrayList<>();
    try (AkriPeer peer = AkriPeer.uds(akri, "pylat", "pylat.sock", false, REGISTER_INTERVAL)) {
      peer.devices("foo");
      peer.awaitRegistered();
      for (int i = 0; i < rounds; i++) {
        for (String handler : new String[] {"simulated", "pylat"}) {
          String config = (handler.equals("simulated") ? "lat-plugin-" : "lat-proto-") + i;
          String res = resource(config, "foo", false);
          long t0 = System.nanoTime();
          writeConfig(root, config, handler, "{descriptions: [\"foo\"], shared: false}", "");
          await().atMost(Duration.ofSeconds(20)).until(() -> healthyAt.containsKey(res));
          double ms = (healthyAt.get(res) - t0) / 1e6;
          (handler.equals("simulated") ? plugin : protocol).add(ms);
          Files.delete(root.resolve("config").resolve(config + ".yaml"));
          awaitGone(agent, res);
        }
      }
    } finally {
      kubelet(agent).removeListener(listener);
    }
    java.util.Collections.sort(plugin);
    java.util.Collections.sort(protocol);
    System.out.printf(
        "akri protocol: Configuration written -> device advertised healthy (median of %d):"
            + " external handler (Python, UDS) %.1f ms, same device via the simulated plugin"
            + " (floor) %.1f ms, ratio %.2f%n",
        rounds,
        protocol.get(rounds / 2),
        plugin.get(rounds / 2),
        protocol.get(rounds / 2) / plugin.get(rounds / 2));
    assertThat(protocol).hasSize(rounds);
    assertThat(plugin).hasSize(rounds);
  }
}
