package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.crd.InstanceNames;
import io.jakri.handler.DiscoveredDevice;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * The diff, grace and admission rules of {@link DeviceTable}, as a table of cases: the snapshots
 * (or grace checks) applied before, the one step under test and its time, and the changes and
 * messages that step must give. Changes are written as {@code KIND id}, a vanished device with the
 * second its grace ends ({@code VANISHED a until 70}).
 */
class DeviceTableTest {

  private static final Instant T0 = Instant.parse("2026-01-01T00:00:00Z");
  private static final Duration GRACE = Duration.ofSeconds(60);

  /** One thing done to the table at second {@code at}: a snapshot, or (null) a grace check. */
  record Step(int at, List<DiscoveredDevice> snapshot) {
    @Override
    public String toString() {
      return "t" + at + (snapshot == null ? " expire" : " " + ids(snapshot));
    }
  }

  /**
   * @param messages substrings expected among the step's warnings and refusals, each in one of them
   *     (an empty list: no warning and no refusal at all)
   */
  record Case(
      String name,
      SlotLimits limits,
      List<Step> before,
      Step step,
      List<String> changes,
      List<String> messages) {
    @Override
    public String toString() {
      return name;
    }
  }

  static Stream<Case> cases() {
    DiscoveredDevice a = device("a", Map.of("P", "1"));
    DiscoveredDevice b = device("b", Map.of());
    DiscoveredDevice c = device("c", Map.of());
    return Stream.of(
        new Case("new device", none(), List.of(), snap(0, a), List.of("APPEARED a"), List.of()),
        new Case(
            "two new devices in snapshot order",
            none(),
            List.of(),
            snap(0, b, a),
            List.of("APPEARED b", "APPEARED a"),
            List.of()),
        new Case(
            "unchanged device: no change",
            none(),
            List.of(snap(0, a)),
            snap(5, a),
            List.of(),
            List.of()),
        new Case(
            "property change",
            none(),
            List.of(snap(0, a)),
            snap(5, device("a", Map.of("P", "2"))),
            List.of("UPDATED a"),
            List.of()),
        new Case(
            "device vanishes: offline with its grace",
            none(),
            List.of(snap(0, a, b)),
            snap(10, b),
            List.of("VANISHED a until 70"),
            List.of()),
        new Case(
            "vanished device is not reported vanished again",
            none(),
            List.of(snap(0, a, b), snap(10, b)),
            snap(20, b),
            List.of(),
            List.of()),
        new Case(
            "returns within grace",
            none(),
            List.of(snap(0, a), snap(10)),
            snap(69, a),
            List.of("RETURNED a"),
            List.of()),
        new Case(
            "returns with other details within grace",
            none(),
            List.of(snap(0, a), snap(10)),
            snap(30, device("a", Map.of("P", "9"))),
            List.of("RETURNED a"),
            List.of()),
        new Case(
            "grace not over yet: stays",
            none(),
            List.of(snap(0, a), snap(10)),
            expire(69),
            List.of(),
            List.of()),
        new Case(
            "grace expires: removed",
            none(),
            List.of(snap(0, a), snap(10)),
            expire(70),
            List.of("REMOVED a"),
            List.of()),
        new Case(
            "grace expires only for the devices whose grace ended",
            none(),
            List.of(snap(0, a, b, c), snap(10, b, c), snap(20, c)),
            expire(75),
            List.of("REMOVED a"),
            List.of()),
        new Case(
            "returned device is not removed when its old grace ends",
            none(),
            List.of(snap(0, a), snap(10), snap(20, a)),
            expire(80),
            List.of(),
            List.of()),
        new Case(
            "vanishing again starts a new grace",
            none(),
            List.of(snap(0, a), snap(10), snap(20, a), snap(30)),
            expire(80),
            List.of(),
            List.of()),
        new Case(
            "reported after removal: appears again",
            none(),
            List.of(snap(0, a), snap(10), expire(70)),
            snap(80, a),
            List.of("APPEARED a"),
            List.of()),
        new Case(
            "duplicate ids in one snapshot: the first counts",
            none(),
            List.of(),
            snap(0, a, device("a", Map.of("P", "other")), b),
            List.of("APPEARED a", "APPEARED b"),
            List.of("ignored 1 reported device: 1 reported twice")),
        new Case(
            "blank id rejected with a message",
            none(),
            List.of(),
            snap(0, device(" ", Map.of()), b),
            List.of("APPEARED b"),
            List.of("ignored 1 reported device: 1 without an id")),
        new Case(
            "null device rejected with a message",
            none(),
            List.of(),
            snap(0, null, b),
            List.of("APPEARED b"),
            List.of("ignored 1 reported device: 1 without an id")),
        new Case(
            "property that never reaches a container is reported",
            none(),
            List.of(),
            snap(0, device("a", Map.of("A=B", "x"))),
            List.of("APPEARED a"),
            List.of("device property \"A=B\" is not given to containers")),
        new Case(
            "an entry of the device's own env that never reaches a container is reported",
            none(),
            List.of(),
            snap(0, withEnv("a", Map.of("A=B", "x", "GOOD", "y"))),
            List.of("APPEARED a"),
            List.of("device env \"A=B\" is not given to containers")),
        new Case(
            "property dropped again is not reported again",
            none(),
            List.of(snap(0, device("a", Map.of("A=B", "x")))),
            snap(5, device("b", Map.of("A=B", "y"))),
            List.of("APPEARED b", "VANISHED a until 65"),
            List.of()),
        new Case(
            "class the Configuration may not use: refused",
            none(),
            List.of(),
            snap(0, a, inClass("x", "akri.sh/other")),
            List.of("APPEARED a"),
            List.of("1 device refused: class akri.sh/other is in the agent's own domain akri.sh")),
        new Case(
            "class in an allowed domain: taken",
            none(),
            List.of(),
            snap(0, inClass("x", "example.com/cams")),
            List.of("APPEARED x"),
            List.of()),
        new Case(
            "per-Configuration slot cap reached: new devices refused, tracked ones stay",
            new SlotLimits(2, 100),
            List.of(snap(0, a)),
            snap(5, a, b, c),
            List.of("APPEARED b"),
            List.of(
                "1 device of capacity 1 refused: more than 2 slots for this Configuration"
                    + " (--max-slots-per-configuration)")),
        new Case(
            "cap leaves room again once a device is removed",
            new SlotLimits(2, 100),
            List.of(snap(0, a, b), snap(10, b), expire(70)),
            snap(80, b, c),
            List.of("APPEARED c"),
            List.of()),
        new Case(
            "a vanished device in its grace still takes its slots",
            new SlotLimits(2, 100),
            List.of(snap(0, a, b), snap(10, b)),
            snap(20, b, c),
            List.of(),
            List.of("1 device of capacity 1 refused: more than 2 slots")));
  }

  @ParameterizedTest(name = "{0}")
  @MethodSource("cases")
  void stepGivesTheExpectedChanges(Case c) {
    DeviceTable table = new DeviceTable(rules(c.limits()), spec(1, Map.of()));
    for (Step s : c.before()) {
      run(table, s);
    }
    Result result = run(table, c.step());
    assertThat(result.changes()).as("changes").containsExactlyElementsOf(c.changes());
    if (c.messages().isEmpty()) {
      assertThat(result.messages()).as("messages").isEmpty();
    }
    for (String expected : c.messages()) {
      assertThat(result.messages()).as("messages").anyMatch(m -> m.contains(expected));
    }
  }

  @Test
  void vanishedCarriesTheOfflineDeviceAndItsDeadline() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    table.apply(List.of(device("a", Map.of())), T0, DeviceTable.Neighbours.NONE);
    List<DeviceChange> changes =
        table.apply(List.of(), T0.plusSeconds(10), DeviceTable.Neighbours.NONE).changes();
    assertThat(changes).hasSize(1);
    DeviceChange.Vanished v = (DeviceChange.Vanished) changes.get(0);
    assertThat(v.device().online()).isFalse();
    assertThat(v.graceEnds()).isEqualTo(T0.plusSeconds(70));
    assertThat(table.nextExpiry()).contains(T0.plusSeconds(70));
    assertThat(table.get(v.instanceName())).contains(v.device());
  }

  @Test
  void otherConfigurationsCountTowardsTheAgentCap() {
    DeviceTable table = new DeviceTable(rules(new SlotLimits(100, 10)), spec(1, Map.of()));
    DeviceTable.Outcome outcome =
        table.apply(
            List.of(device("a", Map.of()), device("b", Map.of())),
            T0,
            new DeviceTable.Neighbours(9, Map::of));
    assertThat(describe(outcome.changes())).containsExactly("APPEARED a");
    assertThat(outcome.slotRefusal())
        .hasValueSatisfying(
            m ->
                assertThat(m)
                    .isEqualTo(
                        "1 device of capacity 1 refused: more than 10 slots on this agent, 9 of"
                            + " them other Configurations' (--max-slots-per-agent)"));
  }

  @Test
  void aClassServedByAnotherConfigurationIsRefused() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    DeviceTable.Outcome outcome =
        table.apply(
            List.of(inClass("x", "example.com/shared")),
            T0,
            new DeviceTable.Neighbours(0, () -> Map.of("example.com/shared", "other")));
    assertThat(outcome.changes()).isEmpty();
    assertThat(outcome.refusal())
        .contains(
            "1 device refused: class example.com/shared is served by Configuration other on this"
                + " node; a class belongs to one Configuration");
  }

  @Test
  void newcomersBeyondTheDeviceCapWaitWhileVanishedDevicesKeepTheirPlace() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    List<DiscoveredDevice> first = distinct("d", DeviceTable.MAX_DEVICES);
    assertThat(table.apply(first, T0, DeviceTable.Neighbours.NONE).changes().size())
        .isEqualTo(DeviceTable.MAX_DEVICES);
    // All vanish, and new ones come: none fits until the vanished ones are removed.
    List<DiscoveredDevice> second = distinct("n", 10);
    DeviceTable.Outcome outcome =
        table.apply(second, T0.plusSeconds(1), DeviceTable.Neighbours.NONE);
    assertThat(outcome.changes().size()).isEqualTo(DeviceTable.MAX_DEVICES);
    assertThat(outcome.changes().stream().allMatch(ch -> ch.kind() == DeviceChange.Kind.VANISHED))
        .isTrue();
    assertThat(outcome.warnings())
        .containsExactly(
            "10000 devices tracked already (seen or within their offline grace); 10 new devices"
                + " left out until vanished ones leave");
    assertThat(table.expire(T0.plusSeconds(61)).size()).isEqualTo(DeviceTable.MAX_DEVICES);
    assertThat(
            describe(
                table.apply(second, T0.plusSeconds(62), DeviceTable.Neighbours.NONE).changes()))
        .hasSize(10)
        .allMatch(s -> s.startsWith("APPEARED n"));
  }

  /**
   * Exactly {@link DeviceTable#MAX_DEVICES} unique ids: none is over the cap. Among that many ids
   * some share an Instance name (its hash is 3 bytes, Akri's); those, and only those, are ignored,
   * and the warning says so instead of calling them blank or duplicate ids.
   */
  @Test
  void exactlyTheDeviceCapOfUniqueIdsIgnoresOnlyIdsWhoseInstanceNamesCollide() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    List<DiscoveredDevice> ids = new ArrayList<>();
    java.util.Set<String> names = new java.util.HashSet<>();
    int collisions = 0;
    for (int i = 0; i < DeviceTable.MAX_DEVICES; i++) {
      ids.add(device("dev-" + i, Map.of()));
      if (!names.add(InstanceNames.instanceName("cams", "dev-" + i, false, "node-a"))) {
        collisions++;
      }
    }
    assertThat(collisions).as("these ids include colliding names").isPositive();

    DeviceTable.Outcome outcome = table.apply(ids, T0, DeviceTable.Neighbours.NONE);

    assertThat(outcome.changes()).hasSize(DeviceTable.MAX_DEVICES - collisions);
    assertThat(outcome.warnings())
        .containsExactly(
            "ignored "
                + collisions
                + " reported devices: "
                + collisions
                + " whose Instance name (a 3-byte hash of the id) is another reported device's");
    // Ids whose names are all distinct: exactly the cap, nothing ignored.
    DeviceTable fresh = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    DeviceTable.Outcome full =
        fresh.apply(distinct("d", DeviceTable.MAX_DEVICES), T0, DeviceTable.Neighbours.NONE);
    assertThat(full.changes()).hasSize(DeviceTable.MAX_DEVICES);
    assertThat(full.warnings()).isEmpty();
  }

  @Test
  void hostileMountsAndDeviceNodesAreLeftOutAndReportedOncePerDevice() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    DiscoveredDevice hostile =
        new DiscoveredDevice(
            "h",
            Map.of(),
            List.of(
                new DiscoveredDevice.Mount("/etc", "/", false),
                new DiscoveredDevice.Mount("/data", "/opt/data", true)),
            List.of(
                new DiscoveredDevice.DeviceSpec("/dev/x", "/dev/../etc/passwd", "rw"),
                new DiscoveredDevice.DeviceSpec("/dev/y", "/dev/y", "")),
            Map.of(),
            Optional.empty(),
            false);
    DiscoveredDevice clean = device("c", Map.of());

    DeviceTable.Outcome first =
        table.apply(List.of(hostile, clean), T0, DeviceTable.Neighbours.NONE);

    assertThat(first.refusedEntries())
        .containsEntry(io.jakri.agent.model.ContainerPaths.Kind.MOUNT, 1)
        .containsEntry(io.jakri.agent.model.ContainerPaths.Kind.DEVICE_NODE, 2);
    assertThat(first.warnings())
        .singleElement()
        .asString()
        .contains("(id \"h\"): 3 entries refused")
        .contains("mount \"/etc\" from host \"/\"")
        .contains("\"..\" segment")
        .contains("permissions are empty");
    DiscoveredDevice kept = ((DeviceChange.OfDevice) first.changes().get(0)).device().device();
    assertThat(kept.mounts())
        .containsExactly(new DiscoveredDevice.Mount("/data", "/opt/data", true));
    assertThat(kept.deviceSpecs()).isEmpty();

    // The same snapshot again: nothing changes, nothing is reported or counted again.
    DeviceTable.Outcome again =
        table.apply(List.of(hostile, clean), T0.plusSeconds(1), DeviceTable.Neighbours.NONE);
    assertThat(again.changes()).isEmpty();
    assertThat(again.warnings()).isEmpty();
    assertThat(again.refusedEntries()).isEmpty();

    // Other refused entries are reported anew.
    DiscoveredDevice worse =
        new DiscoveredDevice(
            "h",
            Map.of(),
            List.of(new DiscoveredDevice.Mount("/x", "/var/lib/kubelet", false)),
            List.of(),
            Map.of(),
            Optional.empty(),
            false);
    DeviceTable.Outcome changed =
        table.apply(List.of(worse, clean), T0.plusSeconds(2), DeviceTable.Neighbours.NONE);
    assertThat(changed.warnings()).singleElement().asString().contains("/var/lib/kubelet");
    assertThat(changed.refusedEntries())
        .containsExactly(Map.entry(io.jakri.agent.model.ContainerPaths.Kind.MOUNT, 1));
  }

  @Test
  void refusedEntriesOfManyDevicesAreLoggedOneByOneOnlyUpToTheCap() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    List<DiscoveredDevice> devices = new ArrayList<>();
    for (int i = 0; i < 50; i++) {
      devices.add(
          new DiscoveredDevice(
              "d" + i,
              Map.of(),
              List.of(new DiscoveredDevice.Mount("/", "/", false)),
              List.of(),
              Map.of(),
              Optional.empty(),
              false));
    }
    DeviceTable.Outcome outcome = table.apply(devices, T0, DeviceTable.Neighbours.NONE);
    assertThat(outcome.refusedEntries())
        .containsExactly(Map.entry(io.jakri.agent.model.ContainerPaths.Kind.MOUNT, 50));
    assertThat(outcome.warnings()).hasSize(RefusedEntries.MAX_LOGGED_PER_SNAPSHOT + 1);
    assertThat(outcome.warnings().get(RefusedEntries.MAX_LOGGED_PER_SNAPSHOT))
        .startsWith("30 more devices have refused mounts or device nodes");
    assertThat(table.apply(devices, T0.plusSeconds(1), DeviceTable.Neighbours.NONE).warnings())
        .isEmpty();
  }

  @Test
  void snapshotBeyondTheDeviceCapIgnoresTheRest() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    List<DiscoveredDevice> flood = distinct("d", DeviceTable.MAX_DEVICES + 3);
    DeviceTable.Outcome outcome = table.apply(flood, T0, DeviceTable.Neighbours.NONE);
    assertThat(outcome.changes().size()).isEqualTo(DeviceTable.MAX_DEVICES);
    assertThat(table.size()).isEqualTo(DeviceTable.MAX_DEVICES);
    assertThat(outcome.warnings())
        .containsExactly(
            "ignored 3 reported devices: 3 over the limit of 10000 devices per snapshot");
  }

  @Test
  void newSpecRewritesEveryDeviceInPlaceUnlessItMustStartAfresh() {
    DeviceTable table = new DeviceTable(rules(new SlotLimits(4, 100)), spec(1, Map.of()));
    table.apply(
        List.of(device("a", Map.of()), device("b", Map.of())), T0, DeviceTable.Neighbours.NONE);
    table.apply(List.of(device("a", Map.of())), T0.plusSeconds(1), DeviceTable.Neighbours.NONE);
    ConfigurationSpec twice = spec(2, Map.of("COLOR", "red"));
    assertThat(table.admitsInPlace(twice)).isTrue();
    List<DeviceChange> rewritten = table.respecify(twice);
    assertThat(describe(rewritten)).containsExactly("REWRITTEN a", "REWRITTEN b");
    assertThat(rewritten)
        .allMatch(ch -> ((DeviceChange.OfDevice) ch).device().configuration().equals(twice));
    // The offline one stays offline, in its grace.
    assertThat(table.get(rewritten.get(1).instanceName()).orElseThrow().online()).isFalse();
    // Three slots each would take 2 devices beyond the 4 slots: start afresh.
    assertThat(table.admitsInPlace(spec(3, Map.of()))).isFalse();
    // Reserved env names in brokerProperties are refused.
    assertThat(table.admitsInPlace(spec(2, Map.of("LD_PRELOAD", "/x.so")))).isFalse();
    assertThat(describe(table.clear())).containsExactly("WITHDRAWN a", "WITHDRAWN b");
    assertThat(table.size()).isZero();
    assertThat(table.nextExpiry()).isEmpty();
  }

  @Test
  void reservedBrokerEnvIsRefusedUnlessAllowed() {
    ConfigurationSpec spec = spec(1, Map.of("LD_PRELOAD", "/x.so", "PATH", "/y"));
    assertThat(rules(SlotLimits.defaults()).reservedEnvRefusal(spec))
        .contains(
            "spec.brokerProperties: reserved env names \"LD_PRELOAD, PATH\" would change how"
                + " programs in every container given the device run; refused (the operator may"
                + " allow it with --allow-reserved-broker-env)");
    DeviceTable.Rules allowing =
        new DeviceTable.Rules("node-a", GRACE, ClassPolicy.defaults(), SlotLimits.defaults(), true);
    assertThat(allowing.reservedEnvRefusal(spec)).isEmpty();
  }

  @Test
  void aDeviceWhoseWriteFailedIsForgottenAndAppearsAgain() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    DeviceChange appeared =
        table
            .apply(List.of(device("a", Map.of())), T0, DeviceTable.Neighbours.NONE)
            .changes()
            .get(0);
    table.forget(appeared.instanceName());
    assertThat(table.contains(appeared.instanceName())).isFalse();
    assertThat(
            describe(
                table
                    .apply(
                        List.of(device("a", Map.of())),
                        T0.plusSeconds(1),
                        DeviceTable.Neighbours.NONE)
                    .changes()))
        .containsExactly("APPEARED a");
  }

  @Test
  void vanishAllTakesEveryOnlineDeviceOffline() {
    DeviceTable table = new DeviceTable(rules(SlotLimits.defaults()), spec(1, Map.of()));
    table.apply(
        List.of(device("a", Map.of()), device("b", Map.of())), T0, DeviceTable.Neighbours.NONE);
    assertThat(describe(table.vanishAll(T0.plusSeconds(5))))
        .containsExactly("VANISHED a until 65", "VANISHED b until 65");
    assertThat(table.vanishAll(T0.plusSeconds(6))).isEmpty();
  }

  // ---- helpers ----

  private record Result(List<String> changes, List<String> messages) {}

  private static Result run(DeviceTable table, Step step) {
    Instant now = T0.plusSeconds(step.at());
    if (step.snapshot() == null) {
      return new Result(describe(table.expire(now)), List.of());
    }
    DeviceTable.Outcome outcome = table.apply(step.snapshot(), now, DeviceTable.Neighbours.NONE);
    List<String> messages = new ArrayList<>(outcome.warnings());
    outcome.classRefusal().ifPresent(messages::add);
    outcome.slotRefusal().ifPresent(messages::add);
    return new Result(describe(outcome.changes()), messages);
  }

  private static List<String> describe(List<DeviceChange> changes) {
    return changes.stream().map(DeviceTableTest::describe).toList();
  }

  private static String describe(DeviceChange change) {
    String id = ((DeviceChange.OfDevice) change).device().device().id();
    if (change instanceof DeviceChange.Vanished v) {
      return "VANISHED " + id + " until " + Duration.between(T0, v.graceEnds()).toSeconds();
    }
    return change.kind() + " " + id;
  }

  private static Step snap(int at, DiscoveredDevice... devices) {
    return new Step(at, Arrays.asList(devices));
  }

  private static Step expire(int at) {
    return new Step(at, null);
  }

  private static SlotLimits none() {
    return SlotLimits.defaults();
  }

  private static DeviceTable.Rules rules(SlotLimits limits) {
    return new DeviceTable.Rules("node-a", GRACE, ClassPolicy.defaults(), limits, false);
  }

  private static ConfigurationSpec spec(int capacity, Map<String, String> brokerProperties) {
    return new ConfigurationSpec(
        "cams", "simulated", "", List.of(), capacity, brokerProperties, Optional.empty());
  }

  private static DiscoveredDevice device(String id, Map<String, String> properties) {
    return DiscoveredDevice.of(id, properties, false);
  }

  private static DiscoveredDevice withEnv(String id, Map<String, String> env) {
    return new DiscoveredDevice(
        id, Map.of(), List.of(), List.of(), Map.of(), Optional.empty(), false, env);
  }

  private static DiscoveredDevice inClass(String id, String deviceClass) {
    return new DiscoveredDevice(
        id, Map.of(), List.of(), List.of(), Map.of(), Optional.of(deviceClass), false);
  }

  /**
   * {@code n} devices whose Instance names differ (a name is a short hash of the id, so a few ids
   * out of ten thousand share one: those count as duplicates).
   */
  private static List<DiscoveredDevice> distinct(String prefix, int n) {
    java.util.Set<String> names = new java.util.HashSet<>();
    List<DiscoveredDevice> devices = new ArrayList<>();
    for (int i = 0; devices.size() < n; i++) {
      if (names.add(InstanceNames.instanceName("cams", prefix + i, false, "node-a"))) {
        devices.add(device(prefix + i, Map.of()));
      }
    }
    return devices;
  }

  private static String ids(List<DiscoveredDevice> devices) {
    return devices.stream().map(d -> d == null ? "null" : d.id()).toList().toString();
  }
}
