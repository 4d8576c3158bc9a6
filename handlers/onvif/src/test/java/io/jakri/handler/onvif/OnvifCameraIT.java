package io.jakri.handler.onvif;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.testkit.PluginJar;
import io.jakri.handler.testkit.RecordingListener;
import java.net.http.HttpClient;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The handler from the packaged plugin jar against camera stand-ins ({@code
 * onvif-camera-standin.py}) running in a network namespace behind a veth pair ({@link
 * OnvifNetwork}): real multicast probes, real ProbeMatches, real SOAP over HTTP. The stand-in's
 * answers are checked against two independent ONVIF clients in {@link OnvifClientsIT}. Without
 * root/iproute2/python3 the tests are skipped, except when {@code CI=true}: then they fail.
 */
class OnvifCameraIT {

  private static final Duration APPEAR = Duration.ofSeconds(20);

  private static OnvifNetwork network;
  private static PluginJar plugin;
  private static Path pluginsDir;
  private static ScheduledExecutorService scheduler;

  private final List<AutoCloseable> cleanUp = new ArrayList<>();

  @BeforeAll
  static void setUp() throws Exception {
    network = OnvifNetwork.startOrSkip("ip", "python3");
    pluginsDir = Files.createTempDirectory("jakri-onvif-plugins-");
    plugin = PluginJar.loadPackaged(pluginsDir);
    scheduler = Executors.newScheduledThreadPool(2);
  }

  @AfterAll
  static void tearDown() throws Exception {
    if (plugin != null) {
      plugin.close();
    }
    if (scheduler != null) {
      scheduler.shutdownNow();
    }
    if (network != null) {
      network.close();
    }
    if (pluginsDir != null) {
      try (var files = Files.list(pluginsDir)) {
        for (Path p : files.toList()) {
          Files.deleteIfExists(p);
        }
      }
      Files.deleteIfExists(pluginsDir);
    }
  }

  @AfterEach
  void closeAll() throws Exception {
    for (int i = cleanUp.size() - 1; i >= 0; i--) {
      cleanUp.get(i).close();
    }
  }

  private RecordingListener discover(String details) throws Exception {
    return discover(details, Map.of());
  }

  private RecordingListener discover(String details, Map<String, String> properties)
      throws Exception {
    RecordingListener listener = new RecordingListener();
    DiscoveryContext context =
        new DiscoveryContext(
            "onvif-it",
            "node-it",
            "interfaces: [" + network.hostInterface + "]\n" + details,
            properties,
            scheduler);
    Discovery discovery = plugin.handler().start(context, listener);
    cleanUp.add(discovery);
    return listener;
  }

  private OnvifNetwork.Camera camera(String uuid, String... options) throws Exception {
    OnvifNetwork.Camera camera = network.camera(uuid, options);
    cleanUp.add(camera);
    return camera;
  }

  private static String uuid() {
    return UUID.randomUUID().toString();
  }

  private String id(OnvifNetwork.Camera camera) {
    return camera.serviceUrl(network.peerAddress) + "-" + camera.uuid();
  }

  private static Optional<DiscoveredDevice> device(RecordingListener listener, String id) {
    return listener.last().orElse(List.of()).stream().filter(d -> d.id().equals(id)).findFirst();
  }

  private static DiscoveredDevice awaitDevice(RecordingListener listener, String id) {
    await("device " + id)
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(5))
        .until(() -> device(listener, id).isPresent());
    return device(listener, id).orElseThrow();
  }

  /** Waits until {@code listener} has finished {@code rounds} rounds that reported something. */
  private static void awaitFirstSnapshot(RecordingListener listener) {
    await().atMost(APPEAR).until(() -> !listener.snapshots().isEmpty());
  }

  @Test
  void cameraIsAdvertisedWithAkrisIdPropertiesAndSharing() throws Exception {
    OnvifNetwork.Camera camera =
        camera(uuid(), "--ip", "192.168.1.36", "--mac", "00:12:41:5C:A1:A5");
    // Floor: a bare JDK client's first ProbeMatch and its two SOAP calls, in the same run.
    HttpClient bare = HttpClient.newHttpClient();
    BareClient.soap(bare, camera.serviceUrl(network.peerAddress), "<tds:GetSystemDateAndTime/>");
    long floorStart = System.nanoTime();
    long probeNanos =
        BareClient.firstProbeMatch(
            network.hostInterface, "dn:NetworkVideoTransmitter", Duration.ofSeconds(5));
    assertThat(probeNanos).as("a bare probe is answered").isPositive();
    assertThat(
            BareClient.soap(
                bare, camera.serviceUrl(network.peerAddress), "<tds:GetSystemDateAndTime/>"))
        .isEqualTo(200);
    assertThat(
            BareClient.soap(
                bare, camera.serviceUrl(network.peerAddress), "<tds:GetNetworkInterfaces/>"))
        .isEqualTo(200);
    long floorMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - floorStart);

    long start = System.nanoTime();
    RecordingListener listener = discover("discoveryTimeoutSeconds: 1");
    DiscoveredDevice device = awaitDevice(listener, id(camera));
    long handlerMs = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
    String timing =
        "ONVIF_TIMING standin probe->advertised="
            + handlerMs
            + " ms (discoveryTimeoutSeconds=1 collects for 1000 ms) floor="
            + floorMs
            + " ms (bare JDK: first ProbeMatch "
            + TimeUnit.NANOSECONDS.toMillis(probeNanos)
            + " ms + GetSystemDateAndTime + GetNetworkInterfaces)";
    System.out.println(timing);

    assertThat(device.shared()).isTrue();
    assertThat(device.id())
        .isEqualTo(
            "http://"
                + network.peerAddress
                + ":"
                + camera.port()
                + "/onvif/device_service-"
                + camera.uuid());
    assertThat(device.properties())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "ONVIF_DEVICE_SERVICE_URL",
                camera.serviceUrl(network.peerAddress),
                "ONVIF_DEVICE_UUID",
                camera.uuid(),
                "ONVIF_DEVICE_IP_ADDRESS",
                "192.168.1.36",
                "ONVIF_DEVICE_MAC_ADDRESS",
                "00:12:41:5C:A1:A5"));
    assertThat(device.deviceClass()).isEmpty();
    assertThat(handlerMs)
        .as("one round: the 1 s collection, then the SOAP steps")
        .isGreaterThanOrEqualTo(1000);
  }

  @Test
  void uppercaseUuidBecomesAkrisLowercaseDeviceId() throws Exception {
    String upper = uuid().toUpperCase(java.util.Locale.ROOT);
    OnvifNetwork.Camera camera = camera(upper);
    RecordingListener listener = discover("");
    String id =
        camera.serviceUrl(network.peerAddress) + "-" + upper.toLowerCase(java.util.Locale.ROOT);
    assertThat(awaitDevice(listener, id).properties())
        .containsEntry("ONVIF_DEVICE_UUID", upper.toLowerCase(java.util.Locale.ROOT));
  }

  @Test
  void everyFilterIncludesAndExcludesEachWay() throws Exception {
    String uuidA = uuid();
    OnvifNetwork.Camera a =
        camera(
            uuidA,
            "--scopes",
            "onvif://www.onvif.org/name/Alpha onvif://www.onvif.org/location/door",
            "--ip",
            "192.168.7.10",
            "--mac",
            "aa:bb:cc:00:00:0a");
    OnvifNetwork.Camera b =
        camera(
            uuid(),
            "--scopes",
            "onvif://www.onvif.org/name/Beta",
            "--ip",
            "192.168.7.11",
            "--mac",
            "aa:bb:cc:00:00:0b");
    String idA = id(a);
    String idB = id(b);
    RecordingListener all = discover("");
    Map<String, RecordingListener> filtered = new java.util.LinkedHashMap<>();
    Map<String, List<String>> expected = new java.util.LinkedHashMap<>();
    String[][] cases = {
      {"scopes: {action: Include, items: [onvif://www.onvif.org/name/Alpha]}", "A"},
      {"scopes: {action: Exclude, items: [onvif://www.onvif.org/name/Alpha]}", "B"},
      // a scope matches a whole word only (Akri): a prefix is no match
      {"scopes: {action: Include, items: [onvif://www.onvif.org/name]}", ""},
      {"uuids: {action: Include, items: [" + uuidA.toUpperCase(java.util.Locale.ROOT) + "]}", "A"},
      {"uuids: {action: Exclude, items: [" + uuidA + "]}", "B"},
      {"ipAddresses: {action: Include, items: [192.168.7.11]}", "B"},
      {"ipAddresses: {action: Exclude, items: [192.168.7.11]}", "A"},
      {"macAddresses: {action: Include, items: [AA:BB:CC:00:00:0A]}", "A"},
      {"macAddresses: {action: Exclude, items: [aa:bb:cc:00:00:0a]}", "B"},
      {"macAddresses: {action: Exclude, items: []}", "AB"},
      {"ipAddresses: {action: Include, items: []}", ""},
      {"scopes: {items: [onvif://www.onvif.org/name/Beta]}", "B"},
    };
    for (String[] c : cases) {
      filtered.put(c[0], discover(c[0]));
      List<String> ids = new ArrayList<>();
      if (c[1].contains("A")) {
        ids.add(idA);
      }
      if (c[1].contains("B")) {
        ids.add(idB);
      }
      expected.put(c[0], ids);
    }
    awaitDevice(all, idA);
    awaitDevice(all, idB);
    for (Map.Entry<String, RecordingListener> e : filtered.entrySet()) {
      awaitFirstSnapshot(e.getValue());
      assertThat(e.getValue().lastIds())
          .as(e.getKey())
          .containsExactlyInAnyOrderElementsOf(expected.get(e.getKey()));
    }
  }

  @Test
  void cameraNotAnsweringGetSystemDateAndTimeIsNotAdvertised() throws Exception {
    OnvifNetwork.Camera good = camera(uuid());
    OnvifNetwork.Camera error = camera(uuid(), "--unresponsive", "500");
    OnvifNetwork.Camera hanging = camera(uuid(), "--unresponsive", "hang");
    RecordingListener listener = discover("");
    awaitDevice(listener, id(good));
    assertThat(listener.snapshots())
        .allSatisfy(
            s ->
                assertThat(s)
                    .extracting(DiscoveredDevice::id)
                    .doesNotContain(id(error), id(hanging)));
    assertThat(error.peer().output()).contains("GetSystemDateAndTime");
    assertThat(hanging.peer().output()).contains("GetSystemDateAndTime");
  }

  @Test
  void credentialsSignGetNetworkInterfacesWithAUsernameTokenDigest() throws Exception {
    String uuid = uuid();
    OnvifNetwork.Camera camera =
        camera(uuid, "--username", "admin", "--password", "s3cret!", "--ip", "192.168.9.9");
    String id = id(camera);
    String key = uuid.replace('-', '_');
    RecordingListener perUuid =
        discover("", Map.of("username_" + key, "admin", "password_" + key, "s3cret!"));
    RecordingListener byDefault =
        discover("", Map.of("username_default", "admin", "password_default", "s3cret!"));
    RecordingListener byList =
        discover(
            "",
            Map.of(
                "device_credential_list",
                "[\"cams\"]",
                "cams",
                "{\""
                    + uuid
                    + "\": {\"username\": \"admin\", \"password\": \"czNjcmV0IQ==\","
                    + " \"base64encoded\": true}}"));
    RecordingListener byRefList =
        discover(
            "",
            Map.of(
                "device_credential_ref_list", "[\"refs\"]",
                "refs", "{\"" + uuid + "\": {\"username_ref\": \"u\", \"password_ref\": \"p\"}}",
                "u", "admin",
                "p", "s3cret!"));
    RecordingListener wrong =
        discover("", Map.of("username_default", "admin", "password_default", "nope"));
    RecordingListener none = discover("");
    RecordingListener wrongWithIpFilter =
        discover(
            "ipAddresses: {action: Include, items: [192.168.9.9]}",
            Map.of("username_default", "admin", "password_default", "nope"));

    for (RecordingListener ok : List.of(perUuid, byDefault, byList, byRefList)) {
      assertThat(awaitDevice(ok, id).properties())
          .containsEntry("ONVIF_DEVICE_IP_ADDRESS", "192.168.9.9")
          .containsKey("ONVIF_DEVICE_MAC_ADDRESS");
    }
    // Akri: without the address, a camera still counts when no IP/MAC filter asks for it.
    for (RecordingListener bad : List.of(wrong, none)) {
      assertThat(awaitDevice(bad, id).properties())
          .containsOnlyKeys("ONVIF_DEVICE_SERVICE_URL", "ONVIF_DEVICE_UUID");
    }
    awaitFirstSnapshot(wrongWithIpFilter);
    assertThat(wrongWithIpFilter.lastIds()).isEmpty();
    assertThat(camera.peer().output()).contains("digest ok").contains("digest WRONG");
  }

  @Test
  void cameraThatLeavesIsDroppedFromTheSnapshot() throws Exception {
    OnvifNetwork.Camera stays = camera(uuid());
    OnvifNetwork.Camera leaves = camera(uuid());
    RecordingListener listener = discover("discoveryIntervalSeconds: 1");
    awaitDevice(listener, id(stays));
    awaitDevice(listener, id(leaves));
    long stopped = System.nanoTime();
    leaves.close();
    await("removal")
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(5))
        .until(() -> device(listener, id(leaves)).isEmpty());
    System.out.println(
        "ONVIF_REMOVAL standin gone from the snapshot "
            + TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - stopped)
            + " ms after it stopped (interval 1 s, timeout 1 s)");
    assertThat(listener.lastIds()).containsExactly(id(stays));
  }

  @Test
  void hostileProbeAnswersAreDroppedAndTheRealCameraIsStillFound() throws Exception {
    OnvifNetwork.Camera xxe = camera(uuid(), "--probe-mode", "xxe");
    OnvifNetwork.Camera huge = camera(uuid(), "--probe-mode", "huge");
    OnvifNetwork.Camera spoof =
        camera(uuid(), "--probe-mode", "spoof", "--hostile-from", network.otherPeerAddress);
    // 3000 forged ProbeMatches per probe from another host of the network
    OnvifNetwork.Camera flood =
        camera(
            uuid(),
            "--probe-mode",
            "flood",
            "--flood",
            "3000",
            "--hostile-from",
            network.otherPeerAddress);
    RecordingListener listener = discover("discoveryIntervalSeconds: 1");
    // Exactly the four real cameras: no flood, spoofed or XXE entries, nothing read from a file.
    // (A flood can overflow the socket's receive buffer in a round, so wait for a full round.)
    await("the four real cameras")
        .atMost(APPEAR)
        .pollInterval(Duration.ofMillis(5))
        .untilAsserted(
            () ->
                assertThat(listener.lastIds())
                    .containsExactlyInAnyOrder(id(xxe), id(huge), id(spoof), id(flood)));
    for (List<DiscoveredDevice> snapshot : listener.snapshots()) {
      for (DiscoveredDevice d : snapshot) {
        assertThat(d.id()).doesNotContain("root:").doesNotContain("xxe-").doesNotContain("/flood/");
        assertThat(d.properties().values()).allMatch(v -> v.length() <= 600);
      }
    }
    assertThat(flood.peer().output()).contains("probe from");
  }

  @Test
  void hostileSoapAnswersLeaveTheAddressUnknownAndNothingElse() throws Exception {
    List<OnvifNetwork.Camera> cameras = new ArrayList<>();
    for (String mode : List.of("xxe", "entities", "big", "deep", "garbage", "bad-values")) {
      cameras.add(camera(uuid(), "--soap-mode", mode));
    }
    RecordingListener listener = discover("");
    RecordingListener withMacFilter =
        discover("macAddresses: {action: Exclude, items: [02:00:5e:00:53:99]}");
    for (OnvifNetwork.Camera c : cameras) {
      assertThat(awaitDevice(listener, id(c)).properties())
          .as(c.peer().output())
          .containsOnlyKeys("ONVIF_DEVICE_SERVICE_URL", "ONVIF_DEVICE_UUID");
    }
    awaitFirstSnapshot(withMacFilter);
    assertThat(withMacFilter.lastIds())
        .as("no MAC known: an Exclude filter with items drops it")
        .isEmpty();
  }
}
