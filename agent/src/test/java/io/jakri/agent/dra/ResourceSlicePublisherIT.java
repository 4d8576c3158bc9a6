package io.jakri.agent.dra;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.fabric8.kubernetes.api.model.resource.v1.Device;
import io.fabric8.kubernetes.api.model.resource.v1.DeviceAttribute;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSlice;
import io.fabric8.kubernetes.api.model.resource.v1.ResourceSliceBuilder;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.fabric8.kubernetes.client.server.mock.EnableKubernetesMockClient;
import io.jakri.agent.LogCapture;
import io.jakri.agent.discovery.DeviceChange;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.LocalDevice;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.DiscoveredDevice;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The ResourceSlice publisher alone against the fabric8 mock API server (CRUD): many devices, the
 * slices' limits, API writes per change, properties DRA cannot carry, a previous run's slices.
 * Devices are made up here (no handler), so thousands cost nothing but the slices.
 *
 * <p>Mock on purpose: resource.k8s.io/v1 (DRA) exists from Kubernetes 1.34; the real API server of
 * the tests is 1.26.
 */
@EnableKubernetesMockClient(crud = true)
class ResourceSlicePublisherIT {

  static final String NODE = "slices-node";
  static final Pattern C_IDENTIFIER = Pattern.compile("[A-Za-z_][A-Za-z0-9_]{0,31}");

  KubernetesClient client;
  InMemoryInstanceStore store;
  List<LocalDevice> locals;
  ScheduledExecutorService executor;
  ResourceSlicePublisher publisher;

  @BeforeEach
  void setUp() {
    store = new InMemoryInstanceStore();
    locals = new CopyOnWriteArrayList<>();
    executor = Executors.newSingleThreadScheduledExecutor();
    publisher =
        new ResourceSlicePublisher(
            client, NODE, store, () -> locals, executor, Duration.ofMillis(50));
    store.addListener(publisher);
  }

  @AfterEach
  void tearDown() {
    executor.shutdownNow();
  }

  static ConfigurationSpec spec(String name, int capacity) {
    return new ConfigurationSpec(
        name, "made-up", "", List.of(), capacity, Map.of(), Optional.empty());
  }

  /**
   * Adds {@code count} devices of {@code cfg} with {@code properties}, ids from {@code dev-<from>};
   * returns them.
   */
  List<LocalDevice> add(ConfigurationSpec cfg, int from, int count, Map<String, String> properties)
      throws Exception {
    List<LocalDevice> added = new ArrayList<>();
    for (int i = from; added.size() < count; i++) {
      String id = "dev-" + i;
      String name = InstanceNames.instanceName(cfg.name(), id, false, NODE);
      if (store.get(name).isPresent()) {
        continue; // Instance names have a 3-byte hash: thousands of ids collide now and then
      }
      LocalDevice d = new LocalDevice(name, cfg, DiscoveredDevice.of(id, properties, false), true);
      locals.add(d);
      store.create(Instance.create(name, cfg.name(), cfg.capacity(), false, NODE, Map.of()));
      added.add(d);
    }
    return added;
  }

  List<ResourceSlice> slices(String cfg) {
    String pool = DraNames.pool(NODE, cfg);
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  int deviceCount(String cfg) {
    return slices(cfg).stream().mapToInt(s -> s.getSpec().getDevices().size()).sum();
  }

  /** Awaits the pool holding {@code n} devices in slices that agree on one generation. */
  void awaitPool(String cfg, int n) {
    await()
        .atMost(Duration.ofSeconds(60))
        .until(
            () -> {
              List<ResourceSlice> s = slices(cfg);
              return deviceCount(cfg) == n
                  && s.stream().map(x -> x.getSpec().getPool().getGeneration()).distinct().count()
                      == 1
                  && s.stream()
                      .allMatch(x -> x.getSpec().getPool().getResourceSliceCount() == s.size());
            });
  }

  static void assertWithinDraLimits(List<ResourceSlice> slices) {
    Set<String> names = new HashSet<>();
    for (ResourceSlice s : slices) {
      assertThat(s.getSpec().getDevices()).hasSizeLessThanOrEqualTo(128);
      assertThat(s.getSpec().getDriver()).isEqualTo("akri.sh");
      assertThat(s.getSpec().getNodeName()).isEqualTo(NODE);
      assertThat(s.getMetadata().getName()).hasSizeLessThanOrEqualTo(253);
      for (Device d : s.getSpec().getDevices()) {
        assertThat(names.add(d.getName())).as("device names are unique in a pool").isTrue();
        assertThat(DraNames.isDnsLabel(d.getName())).isTrue();
        assertThat(d.getAttributes()).hasSizeLessThanOrEqualTo(32);
        for (Map.Entry<String, DeviceAttribute> a : d.getAttributes().entrySet()) {
          String[] parts = a.getKey().split("/", 2);
          assertThat(parts[0]).hasSizeLessThanOrEqualTo(63);
          assertThat(parts[1]).matches(C_IDENTIFIER);
          if (a.getValue().getString() != null) {
            assertThat(a.getValue().getString().getBytes(StandardCharsets.UTF_8).length)
                .isLessThanOrEqualTo(64);
          }
        }
      }
    }
  }

  @Test
  void aThousandSlotsMakeEightSlicesAndOneVanishedDeviceRewritesThePoolOnce() throws Exception {
    ConfigurationSpec cfg = spec("thousand", 2);
    List<LocalDevice> devices = add(cfg, 0, 500, Map.of("SUBSYSTEM", "video4linux"));
    publisher.start();
    awaitPool("thousand", 1000);
    List<ResourceSlice> slices = slices("thousand");
    assertThat(slices).hasSize(8);
    assertWithinDraLimits(slices);
    long initialWrites = publisher.writes();
    long generation = slices.get(0).getSpec().getPool().getGeneration();

    // One device vanishes: its two slots leave; every slice of the pool gets the next generation.
    LocalDevice gone = devices.get(123);
    locals.remove(gone);
    long before = publisher.writes();
    publisher.deviceChanged(new DeviceChange.Removed(gone));
    awaitPool("thousand", 998);
    long perChange = publisher.writes() - before;
    assertThat(slices("thousand"))
        .allMatch(s -> s.getSpec().getPool().getGeneration() == generation + 1);
    assertThat(perChange).isEqualTo(8);
    System.out.printf(
        "DRA ResourceSlices: 1,000 slots -> %d slices (floor: ceil(1000/128) = 8); publishing"
            + " them while the 500 devices were being added: %d API writes (floor: 8 slices + 1"
            + " DeviceClass = 9; more when a pass saw part of the burst); one device change -> %d"
            + " writes (every slice of its pool, new generation)%n",
        slices.size(), initialWrites, perChange);

    // An event that changes nothing writes nothing.
    before = publisher.writes();
    publisher.deviceChanged(new DeviceChange.Updated(devices.get(0)));
    publisher.deviceChanged(new DeviceChange.Updated(devices.get(1)));
    // Another pool's change is written after it, so this one's pass has run by then.
    add(spec("marker", 1), 0, 1, Map.of());
    awaitPool("marker", 1);
    assertThat(publisher.writes() - before).isEqualTo(2); // the marker's slice and class only
  }

  @Test
  void tenThousandDevicesOnOneNodeFitInSlicesOf128() throws Exception {
    ConfigurationSpec cfg = spec("many", 1);
    add(cfg, 0, 10_000, Map.of("FLOOR", "3"));
    publisher.start();
    awaitPool("many", 10_000);
    List<ResourceSlice> slices = slices("many");
    assertThat(slices).hasSize(79); // ceil(10000 / 128)
    assertWithinDraLimits(slices);
    publisher.close();
    assertThat(slices("many")).isEmpty();
  }

  @Test
  void propertiesDraCannotCarryAreLeftOutOrHashedAndLoggedOncePerConfiguration() throws Exception {
    Map<String, String> props = new java.util.LinkedHashMap<>();
    props.put("GOOD", "yes");
    props.put("bad.name", "x");
    props.put("LONG_VALUE", "v".repeat(65));
    for (int i = 0; i < 40; i++) {
      props.put(String.format("Z%02d", i), "z");
    }
    try (LogCapture log = LogCapture.of(ResourceSlicePublisher.class)) {
      add(spec("odd", 1), 0, 50, props);
      publisher.start();
      awaitPool("odd", 50);
      assertWithinDraLimits(slices("odd"));
      Device d = slices("odd").get(0).getSpec().getDevices().get(0);
      assertThat(d.getAttributes().get("property.akri.sh/GOOD").getString()).isEqualTo("yes");
      assertThat(d.getAttributes().get("property.akri.sh/LONG_VALUE").getString())
          .startsWith("sha256:");
      assertThat(d.getAttributes()).doesNotContainKey("property.akri.sh/bad.name");
      assertThat(d.getAttributes()).hasSize(32);
      List<String> lines =
          log.messages().stream().filter(m -> m.startsWith("Configuration odd:")).toList();
      // One line per property and rule, not one per device.
      assertThat(lines)
          .contains(
              "Configuration odd: ResourceSlice attribute: property bad.name left out: an"
                  + " attribute name must be a C identifier of at most 32 characters",
              "Configuration odd: ResourceSlice attribute: property LONG_VALUE value hashed: a"
                  + " string attribute holds at most 64 bytes (published as sha256:<56 hex"
                  + " digits>)")
          .doesNotHaveDuplicates();
      // 5 own + GOOD + LONG_VALUE + 25 of the 40 Z's fit: the other 15 in one line.
      assertThat(lines).hasSize(3);
      assertThat(lines.get(2)).contains("properties Z25, Z26, ").endsWith(" name order)");
    }
  }

  @Test
  void aPreviousRunsSlicesAreReplacedWithANewerGenerationOrDeleted() throws Exception {
    String pool = DraNames.pool(NODE, "left");
    for (int i = 0; i < 3; i++) {
      client
          .resources(ResourceSlice.class)
          .resource(
              new ResourceSliceBuilder()
                  .withMetadata(
                      new ObjectMetaBuilder()
                          .withName(DraNames.slice(pool, i))
                          .withLabels(
                              Map.of(
                                  ResourceSlicePublisher.MANAGED_BY,
                                  ResourceSlicePublisher.MANAGER,
                                  ResourceSlicePublisher.CONFIGURATION_LABEL,
                                  "left"))
                          .build())
                  .withNewSpec()
                  .withDriver("akri.sh")
                  .withNodeName(NODE)
                  .withNewPool()
                  .withName(pool)
                  .withGeneration(7L)
                  .withResourceSliceCount(3L)
                  .endPool()
                  .endSpec()
                  .build())
          .create();
    }
    // Another pool of a Configuration this run no longer has: deleted.
    String gonePool = DraNames.pool(NODE, "gone");
    client
        .resources(ResourceSlice.class)
        .resource(
            new ResourceSliceBuilder()
                .withMetadata(
                    new ObjectMetaBuilder()
                        .withName(DraNames.slice(gonePool, 0))
                        .withLabels(
                            Map.of(
                                ResourceSlicePublisher.MANAGED_BY,
                                ResourceSlicePublisher.MANAGER,
                                ResourceSlicePublisher.CONFIGURATION_LABEL,
                                "gone"))
                        .build())
                .withNewSpec()
                .withDriver("akri.sh")
                .withNodeName(NODE)
                .withNewPool()
                .withName(gonePool)
                .withGeneration(2L)
                .withResourceSliceCount(1L)
                .endPool()
                .endSpec()
                .build())
        .create();
    add(spec("left", 1), 0, 5, Map.of());
    publisher.start();
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                slices("left").size() == 1
                    && slices("left").get(0).getSpec().getPool().getGeneration() == 8L
                    && slices("gone").isEmpty());
    assertThat(deviceCount("left")).isEqualTo(5);
  }

  /**
   * Two publishers (two nodes) over one Instance store, both seeing one shared device: it is
   * published once, by the owner (the first node by name), with a node selector naming both; the
   * other writes nothing. The owner closes and leaves the Instance: the other takes the pool over
   * with the next generation, without a duplicate; when the device goes, the pool goes.
   */
  @Test
  void aSharedDeviceIsPublishedOnceByItsOwnerAndTakenOverWithTheNextGeneration() throws Exception {
    ConfigurationSpec cfg = spec("cams", 2);
    String a = "a-node";
    String b = "b-node";
    String name = InstanceNames.instanceName("cams", "cam-1", true, a);
    DiscoveredDevice device = DiscoveredDevice.of("cam-1", Map.of("FLOOR", "3"), true);
    List<LocalDevice> localsA = new CopyOnWriteArrayList<>();
    List<LocalDevice> localsB = new CopyOnWriteArrayList<>();
    localsA.add(new LocalDevice(name, cfg, device, true));
    localsB.add(new LocalDevice(name, cfg, device, true));
    // An unshared device of b stays in b's own pool.
    String own = InstanceNames.instanceName("cams", "cam-2", false, b);
    localsB.add(new LocalDevice(own, cfg, DiscoveredDevice.of("cam-2", Map.of(), false), true));
    store.create(Instance.create(own, "cams", 2, false, b, Map.of()));
    store.create(
        Instance.create(name, "cams", 2, true, a, Map.of("FLOOR", "3"))
            .withNodes(new java.util.TreeSet<>(List.of(a, b))));
    ScheduledExecutorService executorA = Executors.newSingleThreadScheduledExecutor();
    ScheduledExecutorService executorB = Executors.newSingleThreadScheduledExecutor();
    try {
      ResourceSlicePublisher pa =
          new ResourceSlicePublisher(
              client, a, store, () -> localsA, executorA, Duration.ofMillis(50));
      ResourceSlicePublisher pb =
          new ResourceSlicePublisher(
              client, b, store, () -> localsB, executorB, Duration.ofMillis(50));
      store.addListener(pa);
      store.addListener(pb);
      pa.start();
      pb.start();
      String pool = DraNames.sharedPool("cams");
      assertThat(pool).isEqualTo("cams-shared");
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  poolDevices(pool).size() == 2
                      && poolDevices(DraNames.pool(b, "cams")).size() == 2);
      assertThat(allDevicesOf(name))
          .extracting(Device::getName)
          .containsExactly(name + "-0", name + "-1");
      for (ResourceSlice s : poolSlices(pool)) {
        assertThat(s.getSpec().getNodeName()).isNull();
        assertThat(s.getSpec().getPerDeviceNodeSelection()).isTrue();
        assertThat(s.getSpec().getNodeSelector()).isNull();
        assertThat(s.getSpec().getAllNodes()).isNull();
        for (Device d : s.getSpec().getDevices()) {
          var term = d.getNodeSelector().getNodeSelectorTerms();
          assertThat(term).hasSize(1);
          assertThat(term.get(0).getMatchFields()).hasSize(1);
          assertThat(term.get(0).getMatchFields().get(0).getKey()).isEqualTo("metadata.name");
          assertThat(term.get(0).getMatchFields().get(0).getOperator()).isEqualTo("In");
          assertThat(term.get(0).getMatchFields().get(0).getValues()).containsExactly(a, b);
          assertThat(d.getAttributes().get("akri.sh/shared").getBool()).isTrue();
          assertThat(d.getAttributes().get("property.akri.sh/FLOOR").getString()).isEqualTo("3");
        }
      }
      // b's own pool: only its unshared device, with nodeName.
      assertThat(poolSlices(DraNames.pool(b, "cams")))
          .allMatch(s -> b.equals(s.getSpec().getNodeName()))
          .flatExtracting(s -> s.getSpec().getDevices())
          .extracting(Device::getName)
          .containsExactlyInAnyOrder(own + "-0", own + "-1");
      long generation = poolSlices(pool).get(0).getSpec().getPool().getGeneration();
      long writesOfB = pb.writes();

      // A slot claimed for a ResourceClaim on b stays published (its claim holds it); one taken
      // through the device plugin on b leaves. Only the owner writes.
      Instance stored = store.get(name).orElseThrow();
      store.update(
          stored.withUsage(
              Map.of(
                  name + "-0",
                  new io.jakri.crd.SlotUsage.ClaimUse("uid-1", b),
                  name + "-1",
                  new io.jakri.crd.SlotUsage.NodeUse(b))));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  poolDevices(pool).stream()
                          .map(Device::getName)
                          .toList()
                          .equals(List.of(name + "-0"))
                      && poolSlices(pool).get(0).getSpec().getPool().getGeneration()
                          == generation + 1);
      assertThat(pb.writes()).isEqualTo(writesOfB);
      stored = store.get(name).orElseThrow();
      store.update(
          stored.withUsage(
              Map.of(
                  name + "-0",
                  io.jakri.crd.SlotUsage.Free.INSTANCE,
                  name + "-1",
                  io.jakri.crd.SlotUsage.Free.INSTANCE)));
      await().atMost(Duration.ofSeconds(20)).until(() -> poolDevices(pool).size() == 2);
      long before = poolSlices(pool).get(0).getSpec().getPool().getGeneration();

      // The owner stops: its pool stays for b (b still sees the device).
      executorA.shutdownNow();
      assertThat(executorA.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      pa.close();
      assertThat(poolDevices(pool)).hasSize(2);
      // The owner leaves the Instance's nodes: b takes over, next generation, selector just b.
      stored = store.get(name).orElseThrow();
      store.update(stored.withNodes(new java.util.TreeSet<>(List.of(b))));
      await()
          .atMost(Duration.ofSeconds(20))
          .until(
              () ->
                  poolSlices(pool).stream()
                          .allMatch(s -> s.getSpec().getPool().getGeneration() == before + 1)
                      && poolDevices(pool).stream()
                          .allMatch(
                              d ->
                                  d.getNodeSelector()
                                      .getNodeSelectorTerms()
                                      .get(0)
                                      .getMatchFields()
                                      .get(0)
                                      .getValues()
                                      .equals(List.of(b))));
      long handOver = pb.writes() - writesOfB;
      assertThat(handOver).isEqualTo(1); // its one slice, next generation
      System.out.printf(
          "DRA shared device seen by 2 nodes: %d published devices per slot in the cluster (floor:"
              + " 1; one pool per node would give 2); owner hand-over: %d API writes by the new"
              + " owner (floor: the pool's 1 slice)%n",
          allDevicesOf(name).size() / 2, handOver);
      assertThat(allDevicesOf(name))
          .extracting(Device::getName)
          .containsExactly(name + "-0", name + "-1");

      // b closes as the last node that sees it: nothing is left behind.
      executorB.shutdownNow();
      assertThat(executorB.awaitTermination(5, java.util.concurrent.TimeUnit.SECONDS)).isTrue();
      pb.close();
      assertThat(poolSlices(pool)).isEmpty();
      assertThat(poolSlices(DraNames.pool(b, "cams"))).isEmpty();
    } finally {
      executorA.shutdownNow();
      executorB.shutdownNow();
    }
  }

  @Test
  void aSharedPoolAPreviousRunLeftIsRewrittenWithTheNextGeneration() throws Exception {
    String pool = DraNames.sharedPool("kept");
    for (int i = 0; i < 2; i++) {
      client
          .resources(ResourceSlice.class)
          .resource(
              new ResourceSliceBuilder()
                  .withMetadata(
                      new ObjectMetaBuilder()
                          .withName(DraNames.slice(pool, i))
                          .withLabels(
                              Map.of(
                                  ResourceSlicePublisher.MANAGED_BY,
                                  ResourceSlicePublisher.MANAGER,
                                  ResourceSlicePublisher.CONFIGURATION_LABEL,
                                  "kept"))
                          .build())
                  .withNewSpec()
                  .withDriver("akri.sh")
                  .withPerDeviceNodeSelection(true)
                  .withNewPool()
                  .withName(pool)
                  .withGeneration(7L)
                  .withResourceSliceCount(2L)
                  .endPool()
                  .endSpec()
                  .build())
          .create();
    }
    ConfigurationSpec cfg = spec("kept", 1);
    String name = InstanceNames.instanceName("kept", "k-1", true, NODE);
    locals.add(new LocalDevice(name, cfg, DiscoveredDevice.of("k-1", Map.of(), true), true));
    store.create(Instance.create(name, "kept", 1, true, NODE, Map.of()));
    publisher.start();
    // One slice now: generation 8 (after the 7 it found), the second slice deleted.
    await()
        .atMost(Duration.ofSeconds(20))
        .until(
            () ->
                poolSlices(pool).size() == 1
                    && poolSlices(pool).get(0).getSpec().getPool().getGeneration() == 8L);
    assertThat(poolDevices(pool)).extracting(Device::getName).containsExactly(name + "-0");
    assertThat(poolSlices(pool).get(0).getSpec().getPool().getResourceSliceCount()).isEqualTo(1L);
    assertThat(poolSlices(DraNames.pool(NODE, "kept"))).isEmpty();
  }

  List<ResourceSlice> poolSlices(String pool) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .filter(s -> pool.equals(s.getSpec().getPool().getName()))
        .toList();
  }

  List<Device> poolDevices(String pool) {
    return poolSlices(pool).stream().flatMap(s -> s.getSpec().getDevices().stream()).toList();
  }

  /** Every published device of an Instance, in all pools of the cluster. */
  List<Device> allDevicesOf(String instance) {
    return client.resources(ResourceSlice.class).list().getItems().stream()
        .flatMap(s -> s.getSpec().getDevices().stream())
        .filter(d -> instance.equals(d.getAttributes().get("akri.sh/instance").getString()))
        .toList();
  }
}
