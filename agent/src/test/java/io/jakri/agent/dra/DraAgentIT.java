package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.apiextensions.v1.CustomResourceDefinition;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceClass;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaim;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.fabric8.kubernetes.client.server.mock.KubernetesMockServer;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.TestAgent;
import io.jakri.agent.cdi.CdiNames;
import io.jakri.agent.cluster.WatchedNamespaces;
import io.jakri.crd.Configuration;
import io.jakri.crd.Crds;
import io.jakri.crd.Instance;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * A cluster-mode agent with DRA on, against the fabric8 mock API server in CRUD mode
 * (ResourceSlices, DeviceClasses and ResourceClaims as {@code resource.k8s.io/v1} objects) and the
 * Python kubelet stand-in ({@link DraKubelet}): registration through the plugin watcher's socket,
 * slices that follow discovery, prepare/unprepare with CDI ids, the device-plugin path kept out of
 * claimed slots and the reverse, and the claims the DRA contract says fail per claim. The test
 * plays the scheduler: it picks a device from the published slices by attribute and writes the
 * allocation.
 *
 * <p>Mock on purpose: resource.k8s.io/v1 (DRA) exists from Kubernetes 1.34; the real API server of
 * the tests is 1.26.
 */
@EnableKubernetesMockClient(crud = true)
class DraAgentIT {

  static final String NODE = "dra-node";
  static final String NS = "default";
  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  static KubernetesMockServer server;
  static KubernetesClient client;
  @TempDir static Path root;
  static Agent agent;
  static DraKubelet kubelet;
  static DraOptions dra;
  static EventLoopGroup clientLoop;

  @BeforeAll
  static void start() throws Exception {
    for (CustomResourceDefinition crd : Crds.load()) {
      client.apiextensions().v1().customResourceDefinitions().resource(crd).create();
    }
    dra = new DraOptions(root.resolve("plugins_registry"), root.resolve("plugins"));
    Files.createDirectories(dra.registryDir());
    kubelet = DraKubelet.start(dra.registryDir());
    agent = startAgent(NODE, dra);
    clientLoop = new EpollEventLoopGroup(1);
  }

  static Agent startAgent(String node, DraOptions options) throws Exception {
    Path dir = root.resolve(node);
    AgentOptions o =
        new AgentOptions(
                node,
                false,
                Optional.empty(),
                true,
                dir.resolve("device-plugins"),
                dir.resolve("pod-resources").resolve("kubelet.sock"),
                PLUGINS,
                Duration.ofMillis(300))
            .inCluster(WatchedNamespaces.of(NS), false)
            .withDra(Optional.of(options));
    return Agent.start(
        o,
        Optional.of(
            server.createClient(
                b ->
                    b.editOrNewConfig()
                        .withRequestRetryBackoffLimit(Agent.API_RETRIES)
                        .withRequestRetryBackoffInterval(Agent.API_RETRY_INTERVAL_MS)
                        .endConfig())));
  }

  @AfterAll
  static void stop() throws Exception {
    if (agent != null) {
      agent.close();
    }
    if (kubelet != null) {
      kubelet.close();
    }
    if (clientLoop != null) {
      clientLoop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  /** A static-handler Configuration with one widget per entry of {@code floors} on {@code NODE}. */
  static Configuration apply(String name, int capacity, String... floors) {
    StringBuilder details = new StringBuilder("deviceMapping:\n  - hosts: [" + NODE + "]\n");
    details.append("    devices:\n");
    for (int i = 0; i < floors.length; i++) {
      details
          .append("      - resourceName: example.com/")
          .append(name)
          .append("\n        instanceID: \"")
          .append(i)
          .append("\"\n        env: {FLOOR: \"")
          .append(floors[i])
          .append("\"}\n");
    }
    Configuration c =
        client
            .getKubernetesSerialization()
            .unmarshal(
                TestAgent.configuration(name, "static", capacity, details.toString()),
                Configuration.class);
    return client
        .resources(Configuration.class)
        .inNamespace(NS)
        .resource(c)
        .createOr(existing -> existing.update());
  }

  static List<ResourceSlice> slices(String node, String configuration) {
    String pool = DraNames.pool(node, configuration);
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  static List<Device> devices(String node, String configuration) {
    return slices(node, configuration).stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .toList();
  }

  /** The slices of a Configuration's shared pool (the static handler's devices are shared). */
  static List<ResourceSlice> sharedSlices(String configuration) {
    String pool = DraNames.sharedPool(configuration);
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  static List<Device> sharedDevices(String configuration) {
    return sharedSlices(configuration).stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .toList();
  }

  /** The nodes a shared device's node selector names (its one term's metadata.name values). */
  static List<String> selectorNodes(Device d) {
    assertThat(d.getNodeSelector().getNodeSelectorTerms()).hasSize(1);
    var field = d.getNodeSelector().getNodeSelectorTerms().get(0).getMatchFields().get(0);
    assertThat(field.getKey()).isEqualTo("metadata.name");
    assertThat(field.getOperator()).isEqualTo("In");
    return field.getValues();
  }

  /** Awaits the shared pool of {@code configuration} holding exactly {@code n} devices. */
  static List<Device> awaitDevices(String configuration, int n) {
    await().atMost(Duration.ofSeconds(20)).until(() -> sharedDevices(configuration).size() == n);
    return sharedDevices(configuration);
  }

  static String string(Device d, String attribute) {
    return d.getAttributes().get(attribute).getString();
  }

  /** The device whose {@code property.akri.sh/FLOOR} is {@code floor} and slot is {@code slot}. */
  static Device byFloor(List<Device> devices, String floor, long slot) {
    return devices.stream()
        .filter(d -> floor.equals(string(d, "property.akri.sh/FLOOR")))
        .filter(d -> d.getAttributes().get("akri.sh/slot").getInt() == slot)
        .findFirst()
        .orElseThrow();
  }

  /** A ResourceClaim allocated (as the scheduler would) to {@code devices} of {@code pool}. */
  static ResourceClaim allocatedClaim(String name, String pool, String... devices) {
    ResourceClaimBuilder b =
        new ResourceClaimBuilder()
            .withMetadata(
                new ObjectMetaBuilder()
                    .withName(name)
                    .withNamespace(NS)
                    .withUid(UUID.randomUUID().toString())
                    .build())
            .withNewSpec()
            .withNewDevices()
            .addNewRequest()
            .withName("camera")
            .withNewExactly()
            .withDeviceClassName("any.akri.sh")
            .endExactly()
            .endRequest()
            .endDevices()
            .endSpec();
    var results =
        java.util.Arrays.stream(devices)
            .map(
                d ->
                    new io.fabric8.kubernetes.api.model.resource.v1
                            .DeviceRequestAllocationResultBuilder()
                        .withDriver(DraNames.DRIVER)
                        .withPool(pool)
                        .withDevice(d)
                        .withRequest("camera")
                        .build())
            .toList();
    ResourceClaim claim =
        b.withNewStatus()
            .withNewAllocation()
            .withNewDevices()
            .withResults(results)
            .endDevices()
            .endAllocation()
            .endStatus()
            .build();
    ResourceClaim created = client.resource(claim).create();
    // The mock server keeps the uid the object came with only if told; read what it stored.
    return client.resources(ResourceClaim.class).inNamespace(NS).withName(name).get() == null
        ? created
        : client.resources(ResourceClaim.class).inNamespace(NS).withName(name).get();
  }

  static String[] ref(ResourceClaim c) {
    return new String[] {
      c.getMetadata().getNamespace(), c.getMetadata().getUid(), c.getMetadata().getName()
    };
  }

  static Map<String, String> usage(String instance) {
    Instance i = client.resources(Instance.class).inNamespace(NS).withName(instance).get();
    return i.getSpec().getDeviceUsage();
  }

  static String instanceOf(String slot) {
    return slot.substring(0, slot.lastIndexOf('-'));
  }

  long allocatable(String resource) {
    return EmulatedKubelet.of(agent).orElseThrow().allocatable().getOrDefault(resource, -1L);
  }

  @Test
  void registersThroughThePluginWatcherSocketWithBothVersions() {
    JsonNode registered = kubelet.awaitRegistered();
    assertThat(registered.path("type").asText()).isEqualTo("DRAPlugin");
    assertThat(registered.path("name").asText()).isEqualTo("akri.sh");
    assertThat(registered.path("endpoint").asText()).isEqualTo(dra.draSocket().toString());
    assertThat(registered.path("socket").asText())
        .isEqualTo(dra.registryDir().resolve("akri.sh-reg.sock").toString());
    assertThat(registered.path("supported_versions"))
        .extracting(JsonNode::asText)
        .containsExactly("v1.DRAPlugin", "v1beta1.DRAPlugin");
    assertThat(registered.path("version").asText()).isEqualTo("v1");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> agent.draPlugin().orElseThrow().registered());
  }

  @Test
  void slicesPublishEverySlotWithItsAttributesAndFollowDiscovery() {
    apply("floors", 2, "1", "2");
    List<Device> devices = awaitDevices("floors", 4);
    List<ResourceSlice> slices = sharedSlices("floors");
    assertThat(slices).hasSize(1);
    ResourceSlice slice = slices.get(0);
    assertThat(slice.getApiVersion()).isEqualTo("resource.k8s.io/v1");
    assertThat(slice.getSpec().getDriver()).isEqualTo("akri.sh");
    // The static handler's devices are shared: the Configuration's shared pool, a node selector
    // per device.
    assertThat(slice.getSpec().getNodeName()).isNull();
    assertThat(slice.getSpec().getPerDeviceNodeSelection()).isTrue();
    assertThat(slice.getSpec().getPool().getName()).isEqualTo("floors-shared");
    assertThat(slices(NODE, "floors")).isEmpty();
    assertThat(slice.getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
    long generation = slice.getSpec().getPool().getGeneration();
    for (Device d : devices) {
      assertThat(DraNames.isDnsLabel(d.getName())).isTrue();
      assertThat(selectorNodes(d)).containsExactly(NODE);
      assertThat(d.getName()).startsWith(string(d, "akri.sh/instance") + "-");
      assertThat(string(d, "akri.sh/configuration")).isEqualTo("floors");
      assertThat(string(d, "akri.sh/handler")).isEqualTo("static");
      assertThat(d.getAttributes().get("akri.sh/shared").getBool()).isTrue();
      assertThat(string(d, "property.akri.sh/TYPE")).isEqualTo("example.com/floors");
    }
    assertThat(devices)
        .extracting(d -> string(d, "property.akri.sh/FLOOR"))
        .containsExactlyInAnyOrder("1", "1", "2", "2");
    DeviceClass cls = client.resources(DeviceClass.class).withName("floors.akri.sh").get();
    assertThat(cls.getSpec().getSelectors().get(0).getCel().getExpression())
        .isEqualTo(
            "device.driver == \"akri.sh\" && device.attributes[\"akri.sh\"].configuration =="
                + " \"floors\"");

    // The floor-2 device leaves discovery: its slots leave the pool, the generation moves on.
    apply("floors", 2, "1");
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                sharedDevices("floors").stream()
                        .allMatch(d -> string(d, "property.akri.sh/FLOOR").equals("1"))
                    && sharedDevices("floors").size() == 2);
    assertThat(sharedSlices("floors").get(0).getSpec().getPool().getGeneration())
        .isGreaterThan(generation);

    // The Configuration goes: so does the pool.
    client.resources(Configuration.class).inNamespace(NS).withName("floors").delete();
    await().atMost(Duration.ofSeconds(20)).until(() -> sharedSlices("floors").isEmpty());
  }

  @Test
  void preparedClaimGetsCdiIdsOnceAndItsSlotIsUnhealthyForDevicePlugins() throws Exception {
    kubelet.awaitRegistered();
    apply("cams", 2, "1", "2");
    List<Device> devices = awaitDevices("cams", 4);
    Device chosen = byFloor(devices, "2", 0);
    String slot = chosen.getName();
    String instance = string(chosen, "akri.sh/instance");
    String resource = "akri.sh/" + instance;
    await().atMost(Duration.ofSeconds(20)).until(() -> allocatable(resource) == 2L);
    ResourceClaim claim = allocatedClaim("cam-claim", "cams-shared", slot);
    String uid = claim.getMetadata().getUid();

    JsonNode first = kubelet.prepare("v1", ref(claim));
    assertThat(first.path("event").asText()).isEqualTo("prepared");
    JsonNode answer = first.path("claims").path(uid);
    assertThat(answer.path("error").asText()).isEmpty();
    assertThat(answer.path("devices")).hasSize(1);
    JsonNode device = answer.path("devices").get(0);
    assertThat(device.path("pool_name").asText()).isEqualTo("cams-shared");
    assertThat(device.path("device_name").asText()).isEqualTo(slot);
    assertThat(device.path("request_names")).extracting(JsonNode::asText).containsExactly("camera");
    assertThat(device.path("cdi_device_ids"))
        .extracting(JsonNode::asText)
        .containsExactly(CdiNames.qualifiedName("cams", slot));
    assertThat(device.path("cdi_device_ids").get(0).asText()).isEqualTo("akri.sh/cams=" + slot);
    assertThat(usage(instance)).containsEntry(slot, "D:" + uid + ":" + NODE);
    // The device-plugin path sees the slot taken.
    await().atMost(Duration.ofSeconds(20)).until(() -> allocatable(resource) == 1L);
    // The claimed slot stays published (its claim holds it).
    assertThat(sharedDevices("cams")).extracting(Device::getName).contains(slot);

    // The kubelet prepares again (after its restart, say), through v1beta1: the same answer.
    JsonNode again = kubelet.prepare("v1beta1", ref(claim));
    assertThat(again.path("version").asText()).isEqualTo("v1beta1");
    assertThat(again.path("claims").path(uid)).isEqualTo(answer);
    assertThat(usage(instance)).containsEntry(slot, "D:" + uid + ":" + NODE);

    JsonNode unprepared = kubelet.unprepare("v1", ref(claim));
    assertThat(unprepared.path("claims").path(uid).path("error").asText()).isEmpty();
    assertThat(usage(instance)).containsEntry(slot, "");
    await().atMost(Duration.ofSeconds(20)).until(() -> allocatable(resource) == 2L);
    // Unpreparing again (or a claim never prepared here) is fine.
    JsonNode twice = kubelet.unprepare("v1beta1", ref(claim));
    assertThat(twice.path("claims").path(uid).path("error").asText()).isEmpty();
  }

  /**
   * Prepare latency as the stand-in measures it (one kept connection, one claim of one device: a
   * GET of the ResourceClaim and a PUT of the Instance), beside the floor of the same slot claimed
   * through the device plugin's Allocate (one PUT of the Instance) in the same agent against the
   * same API server, interleaved; medians of 9.
   */
  @Test
  void prepareLatencyBesideAllocate() throws Exception {
    kubelet.awaitRegistered();
    apply("lat", 1, "1");
    Device device = awaitDevices("lat", 1).get(0);
    String slot = device.getName();
    String instance = string(device, "akri.sh/instance");
    ResourceClaim claim = allocatedClaim("lat-claim", "lat-shared", slot);
    List<Double> prepare = new java.util.ArrayList<>();
    List<Double> allocate = new java.util.ArrayList<>();
    ManagedChannel channel = devicePlugin("akri.sh/" + instance);
    try {
      DevicePluginGrpc.DevicePluginBlockingStub plugin = DevicePluginGrpc.newBlockingStub(channel);
      for (int i = 0; i < 10; i++) {
        JsonNode p = kubelet.prepare("v1", ref(claim));
        assertThat(p.path("claims").path(claim.getMetadata().getUid()).path("error").asText())
            .isEmpty();
        kubelet.unprepare("v1", ref(claim));
        long t = System.nanoTime();
        plugin.allocate(
            AllocateRequest.newBuilder()
                .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(slot))
                .build());
        double ms = (System.nanoTime() - t) / 1e6;
        assertThat(agent.slots().releaseHeld(instance)).containsExactly(slot);
        if (i > 0) { // the first of each warms its path up
          prepare.add(p.path("ms").asDouble());
          allocate.add(ms);
        }
      }
    } finally {
      channel.shutdownNow();
    }
    double prepareMedian = median(prepare);
    double allocateMedian = median(allocate);
    System.out.printf(
        "DRA NodePrepareResources p50 %.2f ms (claim GET + Instance PUT) vs device-plugin Allocate"
            + " p50 %.2f ms (Instance PUT; floor, same agent and API server) = %.2fx (n=9 each)%n",
        prepareMedian, allocateMedian, prepareMedian / allocateMedian);
    assertThat(prepareMedian).isPositive();
    assertThat(usage(instance)).containsEntry(slot, "");
  }

  static double median(List<Double> values) {
    List<Double> sorted = new java.util.ArrayList<>(values);
    java.util.Collections.sort(sorted);
    return sorted.get(sorted.size() / 2);
  }

  @Test
  void aSlotTakenThroughTheDevicePluginLeavesTheSliceAndRefusesAClaim() throws Exception {
    kubelet.awaitRegistered();
    apply("busy", 1, "1");
    List<Device> devices = awaitDevices("busy", 1);
    String slot = devices.get(0).getName();
    String instance = string(devices.get(0), "akri.sh/instance");
    // The scheduler allocated it from the slice just before a pod got it through the device plugin.
    ResourceClaim late = allocatedClaim("late-claim", "busy-shared", slot);
    ManagedChannel channel = devicePlugin("akri.sh/" + instance);
    try {
      DevicePluginGrpc.newBlockingStub(channel)
          .allocate(
              AllocateRequest.newBuilder()
                  .addContainerRequests(ContainerAllocateRequest.newBuilder().addDevicesIds(slot))
                  .build());
    } finally {
      channel.shutdownNow();
    }

    assertThat(usage(instance)).containsEntry(slot, NODE);
    await().atMost(Duration.ofSeconds(20)).until(() -> sharedDevices("busy").isEmpty());

    JsonNode answer = kubelet.prepare(null, ref(late));
    String error = answer.path("claims").path(late.getMetadata().getUid()).path("error").asText();
    assertThat(error).contains(slot).contains("in use").contains("held on node " + NODE);
    assertThat(answer.path("claims").path(late.getMetadata().getUid()).path("devices")).isEmpty();
    assertThat(usage(instance)).containsEntry(slot, NODE);
  }

  @Test
  void eachBadClaimIsItsOwnErrorAndTheGoodOneIsPrepared() throws Exception {
    kubelet.awaitRegistered();
    apply("mixed", 1, "1", "2");
    List<Device> devices = awaitDevices("mixed", 2);
    String pool = "mixed-shared";
    ResourceClaim good = allocatedClaim("good", pool, devices.get(0).getName());
    ResourceClaim elsewhere = allocatedClaim("elsewhere", "other-node-mixed", "mixed-abcdef-0");
    ResourceClaim missing = allocatedClaim("missing", pool, "mixed-000000-0");
    String[] unknown = {NS, UUID.randomUUID().toString(), "no-such-claim"};
    String[] wrongUid = {NS, UUID.randomUUID().toString(), "good"};

    JsonNode answer;
    try (io.jakri.agent.LogCapture log = io.jakri.agent.LogCapture.of(ClaimPreparer.class)) {
      answer = kubelet.prepare("v1", ref(good), ref(elsewhere), ref(missing), unknown, wrongUid);
      // One warning line per bad claim, naming it and the rule; no stack trace.
      assertThat(log.events())
          .filteredOn(e -> e.getLevel() == ch.qos.logback.classic.Level.WARN)
          .hasSize(4)
          .allMatch(e -> e.getThrowableProxy() == null)
          .extracting(e -> e.getFormattedMessage())
          .anyMatch(
              m ->
                  m.equals(
                      "ResourceClaim default/no-such-claim (uid "
                          + unknown[1]
                          + ") not prepared on node "
                          + NODE
                          + ": ResourceClaim default/no-such-claim not found"));
    }
    JsonNode claims = answer.path("claims");
    assertThat(claims.size()).isEqualTo(5);
    assertThat(claims.path(good.getMetadata().getUid()).path("error").asText()).isEmpty();
    assertThat(claims.path(good.getMetadata().getUid()).path("devices")).hasSize(1);
    assertThat(claims.path(elsewhere.getMetadata().getUid()).path("error").asText())
        .isEqualTo(
            "device other-node-mixed/mixed-abcdef-0 is not on node "
                + NODE
                + " (no such pool here)");
    assertThat(claims.path(missing.getMetadata().getUid()).path("error").asText())
        .isEqualTo("device " + pool + "/mixed-000000-0 is not seen by node " + NODE + " (gone?)");
    assertThat(claims.path(unknown[1]).path("error").asText())
        .isEqualTo("ResourceClaim default/no-such-claim not found");
    assertThat(claims.path(wrongUid[1]).path("error").asText())
        .startsWith("ResourceClaim default/good has uid " + good.getMetadata().getUid());
    assertThat(claims.path(unknown[1]).path("devices")).isEmpty();
    kubelet.unprepare("v1", ref(good));
    assertThat(usage(instanceOf(devices.get(0).getName())))
        .containsEntry(devices.get(0).getName(), "");
  }

  /**
   * A shared device seen by two nodes: published once, in its Configuration's shared pool, with a
   * node selector naming both, by one agent (the owner: the first node in name order, here the
   * second agent {@code aa-node}); a claim allocated from that pool is prepared on the other node,
   * and its slot is Unhealthy for the device plugins of both. When the owner stops and leaves the
   * Instance (as the controller removes a gone node), the other agent takes the pool over with a
   * higher generation, and no duplicate remains.
   */
  @Test
  void aSharedDeviceIsPublishedOnceWithANodeSelectorAndItsOwnerHandsItOver() throws Exception {
    kubelet.awaitRegistered();
    String owner = "aa-node"; // sorts before NODE
    DraOptions peerDra = new DraOptions(root.resolve("aa-registry"), root.resolve("aa-plugins"));
    Agent peer = startAgent(owner, peerDra);
    boolean peerClosed = false;
    try {
      String details =
          "deviceMapping:\n  - hosts: ["
              + NODE
              + ", "
              + owner
              + "]\n    devices:\n"
              + "      - resourceName: example.com/both\n        instanceID: \"1\"\n";
      Configuration c =
          client
              .getKubernetesSerialization()
              .unmarshal(
                  TestAgent.configuration("both", "static", 2, details), Configuration.class);
      client.resources(Configuration.class).inNamespace(NS).resource(c).create();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  sharedDevices("both").size() == 2
                      && sharedDevices("both").stream()
                          .allMatch(d -> selectorNodes(d).equals(List.of(owner, NODE))));
      List<Device> devices = sharedDevices("both");
      String instance = string(devices.get(0), "akri.sh/instance");
      // Exactly one device per slot in the whole cluster: none in either node's own pool.
      assertThat(
              client.resources(ResourceSlice.class).list().getItems().stream()
                  .flatMap(s -> s.getSpec().getDevices().stream())
                  .filter(d -> instance.equals(string(d, "akri.sh/instance"))))
          .extracting(Device::getName)
          .containsExactlyInAnyOrder(instance + "-0", instance + "-1");
      assertThat(slices(NODE, "both")).isEmpty();
      assertThat(slices(owner, "both")).isEmpty();
      assertThat(sharedSlices("both"))
          .allSatisfy(
              s -> {
                assertThat(s.getSpec().getNodeName()).isNull();
                assertThat(s.getSpec().getPerDeviceNodeSelection()).isTrue();
              });
      // Written by the owner only.
      assertThat(peer.resourceSlices().orElseThrow().writes()).isPositive();

      String slot = instance + "-1";
      String resource = "akri.sh/" + instance;
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  allocatable(resource) == 2L
                      && EmulatedKubelet.of(peer)
                              .orElseThrow()
                              .allocatable()
                              .getOrDefault(resource, -1L)
                          == 2L);
      // The scheduler allocated it from the shared pool; this node (not the owner) prepares it.
      ResourceClaim claim = allocatedClaim("both-claim", "both-shared", slot);
      String uid = claim.getMetadata().getUid();
      JsonNode answer = kubelet.prepare("v1", ref(claim));
      assertThat(answer.path("claims").path(uid).path("error").asText()).isEmpty();
      assertThat(answer.path("claims").path(uid).path("devices").get(0).path("pool_name").asText())
          .isEqualTo("both-shared");
      assertThat(
              answer
                  .path("claims")
                  .path(uid)
                  .path("devices")
                  .get(0)
                  .path("cdi_device_ids")
                  .get(0)
                  .asText())
          .isEqualTo(CdiNames.qualifiedName("both", slot));
      assertThat(usage(instance)).containsEntry(slot, "D:" + uid + ":" + NODE);
      // Unhealthy for the device plugins here and on the owner; still published (its claim
      // holds it).
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  allocatable(resource) == 1L
                      && EmulatedKubelet.of(peer)
                              .orElseThrow()
                              .allocatable()
                              .getOrDefault(resource, -1L)
                          == 1L);
      assertThat(sharedDevices("both")).extracting(Device::getName).contains(slot);
      JsonNode unprepared = kubelet.unprepare("v1", ref(claim));
      assertThat(unprepared.path("claims").path(uid).path("error").asText()).isEmpty();
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  allocatable(resource) == 2L
                      && EmulatedKubelet.of(peer)
                              .orElseThrow()
                              .allocatable()
                              .getOrDefault(resource, -1L)
                          == 2L);

      // The owner stops: it leaves the pool for the other node that sees the device.
      long generation = sharedSlices("both").get(0).getSpec().getPool().getGeneration();
      peer.close();
      peerClosed = true;
      assertThat(sharedDevices("both")).hasSize(2);
      // The controller removes the gone node from the Instance; the other agent takes over.
      client
          .resources(Instance.class)
          .inNamespace(NS)
          .withName(instance)
          .edit(
              i -> {
                i.getSpec().getNodes().remove(owner);
                return i;
              });
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  sharedSlices("both").stream()
                          .allMatch(s -> s.getSpec().getPool().getGeneration() > generation)
                      && sharedDevices("both").stream()
                          .allMatch(d -> selectorNodes(d).equals(List.of(NODE))));
      assertThat(
              client.resources(ResourceSlice.class).list().getItems().stream()
                  .flatMap(s -> s.getSpec().getDevices().stream())
                  .filter(d -> instance.equals(string(d, "akri.sh/instance"))))
          .extracting(Device::getName)
          .containsExactlyInAnyOrder(instance + "-0", instance + "-1");
      assertThat(sharedSlices("both"))
          .allMatch(s -> s.getSpec().getPool().getGeneration() == generation + 1);

      // The Configuration goes: the last node that saw the device deletes the pool.
      client.resources(Configuration.class).inNamespace(NS).withName("both").delete();
      await().atMost(Duration.ofSeconds(20)).until(() -> sharedSlices("both").isEmpty());
    } finally {
      if (!peerClosed) {
        peer.close();
      }
    }
  }

  /** An unshared device (the simulated handler's) stays in its node's pool, prepared from it. */
  @Test
  void anUnsharedDeviceStaysInItsNodesPoolAndIsPreparedFromIt() throws Exception {
    kubelet.awaitRegistered();
    Configuration c =
        client
            .getKubernetesSerialization()
            .unmarshal(
                TestAgent.configuration("solo", "simulated", 1, "count: 1\nshared: false\n"),
                Configuration.class);
    client.resources(Configuration.class).inNamespace(NS).resource(c).create();
    await().atMost(Duration.ofSeconds(20)).until(() -> devices(NODE, "solo").size() == 1);
    ResourceSlice slice = slices(NODE, "solo").get(0);
    assertThat(slice.getSpec().getNodeName()).isEqualTo(NODE);
    assertThat(slice.getSpec().getPerDeviceNodeSelection()).isNull();
    Device device = slice.getSpec().getDevices().get(0);
    assertThat(device.getNodeSelector()).isNull();
    assertThat(device.getAttributes().get("akri.sh/shared").getBool()).isFalse();
    assertThat(sharedSlices("solo")).isEmpty();
    String slot = device.getName();
    String instance = string(device, "akri.sh/instance");
    ResourceClaim claim = allocatedClaim("solo-claim", NODE + "-solo", slot);
    ResourceClaim missing = allocatedClaim("solo-missing", NODE + "-solo", "solo-000000-0");
    ResourceClaim shared = allocatedClaim("solo-shared", "solo-shared", slot);
    JsonNode answer = kubelet.prepare("v1", ref(claim), ref(missing), ref(shared));
    JsonNode good = answer.path("claims").path(claim.getMetadata().getUid());
    assertThat(good.path("error").asText()).isEmpty();
    assertThat(good.path("devices").get(0).path("pool_name").asText()).isEqualTo(NODE + "-solo");
    assertThat(usage(instance))
        .containsEntry(slot, "D:" + claim.getMetadata().getUid() + ":" + NODE);
    assertThat(answer.path("claims").path(missing.getMetadata().getUid()).path("error").asText())
        .isEqualTo(
            "device " + NODE + "-solo/solo-000000-0 is not published by node " + NODE + " (gone?)");
    // An unshared device is not in the Configuration's shared pool.
    assertThat(answer.path("claims").path(shared.getMetadata().getUid()).path("error").asText())
        .isEqualTo(
            "device solo-shared/" + slot + " is not on node " + NODE + " (no such pool here)");
    kubelet.unprepare("v1", ref(claim));
    assertThat(usage(instance)).containsEntry(slot, "");
    client.resources(Configuration.class).inNamespace(NS).withName("solo").delete();
    await().atMost(Duration.ofSeconds(20)).until(() -> slices(NODE, "solo").isEmpty());
  }

  /**
   * The shipped example (examples/dra): its Configuration, on this node instead of minikube,
   * publishes the attribute its ResourceClaimTemplate selects on, in the DeviceClass it names; the
   * selector (one comparison of a string attribute) picks exactly the floor-2 widget.
   */
  @Test
  void theShippedExamplesClaimTemplateSelectsOneDeviceTheAgentPublishes() throws Exception {
    Path examples = Path.of("..", "examples", "dra");
    String yaml =
        Files.readString(examples.resolve("configuration.yaml"))
            .replace("hosts: [minikube]", "hosts: [" + NODE + "]");
    Configuration c = client.getKubernetesSerialization().unmarshal(yaml, Configuration.class);
    client.resources(Configuration.class).inNamespace(NS).resource(c).create();
    String configuration = c.getMetadata().getName();
    List<Device> devices = awaitDevices(configuration, 2);

    io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate template =
        client
            .getKubernetesSerialization()
            .unmarshal(
                Files.readString(examples.resolve("claim-template.yaml")),
                io.fabric8.kubernetes.api.model.resource.v1.ResourceClaimTemplate.class);
    var exactly = template.getSpec().getSpec().getDevices().getRequests().get(0).getExactly();
    assertThat(exactly.getDeviceClassName()).isEqualTo(DraNames.deviceClass(configuration));
    assertThat(client.resources(DeviceClass.class).withName(exactly.getDeviceClassName()).get())
        .isNotNull();
    String expression = exactly.getSelectors().get(0).getCel().getExpression();
    java.util.regex.Matcher m =
        java.util.regex.Pattern.compile(
                "device\\.attributes\\[\"([^\"]+)\"\\]\\.([A-Za-z_][A-Za-z0-9_]*) == \"([^\"]*)\"")
            .matcher(expression);
    assertThat(m.matches()).as(expression).isTrue();
    String attribute = m.group(1) + "/" + m.group(2);
    assertThat(devices)
        .filteredOn(d -> d.getAttributes().containsKey(attribute))
        .filteredOn(d -> m.group(3).equals(d.getAttributes().get(attribute).getString()))
        .hasSize(1);
    client.resources(Configuration.class).inNamespace(NS).withName(configuration).delete();
  }

  @Test
  void anAgentThatStopsLeavesNoSliceAndNoSocket() throws Exception {
    DraOptions other =
        new DraOptions(root.resolve("other-registry"), root.resolve("other-plugins"));
    Agent second = startAgent("other-node", other);
    try {
      StringBuilder details =
          new StringBuilder(
              "deviceMapping:\n  - hosts: [other-node]\n    devices:\n"
                  + "      - resourceName: example.com/lonely\n        instanceID: \"1\"\n");
      Configuration c =
          client
              .getKubernetesSerialization()
              .unmarshal(
                  TestAgent.configuration("lonely", "static", 3, details.toString()),
                  Configuration.class);
      client.resources(Configuration.class).inNamespace(NS).resource(c).create();
      await().atMost(Duration.ofSeconds(20)).until(() -> sharedDevices("lonely").size() == 3);
      assertThat(other.registrationSocket()).exists();
      assertThat(other.draSocket()).exists();
    } finally {
      second.close();
    }
    // The only node that saw the shared device deleted its shared pool too.
    assertThat(sharedSlices("lonely")).isEmpty();
    assertThat(
            client.resources(ResourceSlice.class).list().getItems().stream()
                .filter(s -> "other-node".equals(s.getSpec().getNodeName())))
        .isEmpty();
    assertThat(other.registrationSocket()).doesNotExist();
    assertThat(other.draSocket()).doesNotExist();
  }

  ManagedChannel devicePlugin(String resource) {
    Path socket = agent.devicePlugins().socketOf(resource).orElseThrow();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(clientLoop)
            .usePlaintext()
            .build();
    return channel;
  }
}
