package io.jakri.handler.staticmapping;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.tuple;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class StaticHandlerTest {

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final StaticHandler handler = new StaticHandler();

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String node, String details) {
    return new DiscoveryContext("static", node, details, Map.of(), scheduler);
  }

  /** Starts discovery on {@code node}, waits for its snapshot and closes it. */
  private List<DiscoveredDevice> discover(String node, String details)
      throws InvalidDetailsException {
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery = handler.start(context(node, details), listener)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots().isEmpty());
    }
    assertThat(listener.snapshots()).hasSize(1);
    return listener.snapshots().get(0);
  }

  private Validation validate(String details) {
    return handler.validate(context("node-a", details));
  }

  private static String resource(String name) {
    try (InputStream in = StaticHandlerTest.class.getResourceAsStream("/" + name)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException(e);
    }
  }

  private static List<String> ids(List<DiscoveredDevice> devices) {
    return devices.stream().map(DiscoveredDevice::id).toList();
  }

  /**
   * Details with one mapping: {@code hosts} (a YAML flow list) and {@code devices} (YAML lines).
   */
  private static String mapping(String hosts, String devices) {
    return "deviceMapping:\n  - hosts: " + hosts + "\n    devices:\n" + devices;
  }

  @Test
  void isNamedStaticWithoutAliases() {
    assertThat(handler.name()).isEqualTo("static");
    assertThat(handler.aliases()).isEmpty();
  }

  @Test
  void spookdWalkthroughGivesMinikubeTheWidgetAndTheThingamajig() throws Exception {
    String details = resource("spookd-walkthrough.yaml");
    assertThat(validate(details)).isEqualTo(Validation.ok());

    List<DiscoveredDevice> devices = discover("minikube", details);

    assertThat(devices)
        .containsExactly(
            new DiscoveredDevice(
                "example.com/widget/0001",
                Map.of(
                    "ID", "0001",
                    "TYPE", "example.com/widget",
                    "IP", "192.168.0.200",
                    "PORT", "12345"),
                List.of(),
                List.of(),
                Map.of(),
                Optional.of("example.com/widget"),
                true),
            new DiscoveredDevice(
                "example.com/thingamajig/A1234",
                Map.of("ID", "A1234", "TYPE", "example.com/thingamajig"),
                List.of(),
                List.of(),
                Map.of(),
                Optional.of("example.com/thingamajig"),
                true));
  }

  @Test
  void nodeThatNoMappingListsSeesAnEmptySnapshot() throws Exception {
    assertThat(discover("other-node", resource("spookd-walkthrough.yaml"))).isEmpty();
  }

  @Test
  void spookdReadmeExampleGivesEachHostTheDevicesListedForIt() throws Exception {
    String details = resource("spookd-readme-example.yaml");
    assertThat(validate(details)).isEqualTo(Validation.ok());

    List<String> lab1 =
        List.of(
            "skao.int/oscilloscope/0001",
            "skao.int/oscilloscope/0002",
            "skao.int/signal-generator/0001");
    assertThat(ids(discover("lab1-host1", details))).containsExactlyElementsOf(lab1);
    assertThat(ids(discover("lab1-host2", details))).containsExactlyElementsOf(lab1);
    assertThat(ids(discover("lab2-host1", details)))
        .containsExactly("skao.int/oscilloscope/0003", "skao.int/signal-generator/0002");
  }

  @Test
  void sameInstanceIdUnderDifferentResourceNamesGivesDistinctDevices() throws Exception {
    List<DiscoveredDevice> devices = discover("lab1-host1", resource("spookd-readme-example.yaml"));

    assertThat(devices)
        .filteredOn(device -> device.properties().get("ID").equals("0001"))
        .extracting(DiscoveredDevice::id, DiscoveredDevice::deviceClass)
        .containsExactly(
            tuple("skao.int/oscilloscope/0001", Optional.of("skao.int/oscilloscope")),
            tuple("skao.int/signal-generator/0001", Optional.of("skao.int/signal-generator")));
  }

  @Test
  void everyDeviceIsShared() throws Exception {
    assertThat(discover("lab2-host1", resource("spookd-readme-example.yaml")))
        .isNotEmpty()
        .extracting(DiscoveredDevice::shared)
        .containsOnly(true);
  }

  @Test
  void deviceListedInSeveralMappingsIsSeenOnTheUnionOfTheirHosts() throws Exception {
    String device = "      - {resourceName: example.com/widget, instanceID: w1, env: {IP: x}}\n";
    String details =
        "deviceMapping:\n"
            + "  - hosts: [node-a]\n    devices:\n"
            + device
            + "  - hosts: [node-b]\n    devices:\n"
            + device
            + "  - hosts: [node-c]\n    devices: []\n";

    assertThat(validate(details).errors()).isEmpty();
    assertThat(ids(discover("node-a", details))).containsExactly("example.com/widget/w1");
    assertThat(ids(discover("node-b", details))).containsExactly("example.com/widget/w1");
    assertThat(discover("node-c", details)).isEmpty();
  }

  @Test
  void sameDeviceWithDifferentEnvIsAnErrorNamingBothPlaces() {
    String details =
        "deviceMapping:\n"
            + "  - hosts: [node-a]\n    devices:\n"
            + "      - {resourceName: example.com/widget, instanceID: w0}\n"
            + "      - {resourceName: example.com/widget, instanceID: w1, env: {IP: x}}\n"
            + "  - hosts: [node-b]\n    devices:\n"
            + "      - {resourceName: example.com/widget, instanceID: w1, env: {IP: y}}\n";

    assertThat(validate(details).errors())
        .containsExactly(
            "deviceMapping[1].devices[0] lists example.com/widget instance \"w1\" with a different"
                + " env than deviceMapping[0].devices[1]: a device listed more than once must have"
                + " the same env everywhere");
    assertThatThrownBy(() -> handler.start(context("node-a", details), new RecordingListener()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("deviceMapping[1].devices[0]")
        .hasMessageContaining("deviceMapping[0].devices[1]");
  }

  @Test
  void unquotedInstanceIdAndEnvValuesKeepTheTextAsWritten() throws Exception {
    String details =
        mapping(
            "[node-a]",
            "      - resourceName: example.com/widget\n"
                + "        instanceID: 0001\n"
                + "        env: {PORT: 012, ENABLED: yes, RATIO: 1.50, HEX: 0x1F, EMPTY: }\n");

    DiscoveredDevice device = discover("node-a", details).get(0);

    assertThat(device.id()).isEqualTo("example.com/widget/0001");
    assertThat(device.properties())
        .containsEntry("ID", "0001")
        .containsEntry("PORT", "012")
        .containsEntry("ENABLED", "yes")
        .containsEntry("RATIO", "1.50")
        .containsEntry("HEX", "0x1F")
        .containsEntry("EMPTY", "");
  }

  @Test
  void numericHostNameIsMatchedAsWritten() throws Exception {
    String details =
        mapping("[007]", "      - {resourceName: example.com/widget, instanceID: a}\n");

    assertThat(ids(discover("007", details))).containsExactly("example.com/widget/a");
  }

  @Test
  void mappingWithoutHostsIsAnError() {
    String devices = "      - {resourceName: example.com/widget, instanceID: a}\n";
    assertThat(validate(mapping("[]", devices)).errors())
        .containsExactly("deviceMapping[0].hosts must list at least one host");
    assertThat(validate("deviceMapping:\n  - devices:\n" + devices).errors())
        .containsExactly("deviceMapping[0].hosts must list at least one host");
  }

  @Test
  void blankHostIsAnError() {
    assertThat(
            validate(mapping("[node-a, \"\"]", "      - {resourceName: a.b/c, instanceID: a}\n"))
                .errors())
        .containsExactly("deviceMapping[0].hosts[1] must not be empty");
  }

  @Test
  void hostThatCannotBeANodeNameIsAWarning() {
    Validation validation =
        validate(mapping("[Lab1_Host]", "      - {resourceName: a.b/c, instanceID: a}\n"));

    assertThat(validation.errors()).isEmpty();
    assertThat(validation.warnings())
        .containsExactly(
            "deviceMapping[0].hosts[0] \"Lab1_Host\" is not a valid node name (a lowercase DNS"
                + " subdomain), so no node will see its devices");
  }

  @Test
  void missingResourceNameIsAnError() {
    assertThat(validate(mapping("[node-a]", "      - {instanceID: a}\n")).errors())
        .containsExactly("deviceMapping[0].devices[0].resourceName is required");
  }

  @Test
  void emptyResourceNameIsAnError() {
    assertThat(
            validate(mapping("[node-a]", "      - {resourceName: \"\", instanceID: a}\n")).errors())
        .containsExactly("deviceMapping[0].devices[0].resourceName must not be empty");
  }

  @Test
  void invalidResourceNamesAreErrorsNamingTheField() {
    String devices =
        "      - {resourceName: widget, instanceID: a}\n"
            + "      - {resourceName: kubernetes.io/widget, instanceID: a}\n"
            + "      - {resourceName: Example.com/widget, instanceID: a}\n"
            + "      - {resourceName: example.com/a/b, instanceID: a}\n";

    assertThat(validate(mapping("[node-a]", devices)).errors())
        .containsExactly(
            "deviceMapping[0].devices[0].resourceName \"widget\" must have the form"
                + " <domain>/<name> with exactly one '/'",
            "deviceMapping[0].devices[1].resourceName \"kubernetes.io/widget\" must not be in the"
                + " kubernetes.io namespace, which is reserved",
            "deviceMapping[0].devices[2].resourceName \"Example.com/widget\" must start with a"
                + " lowercase DNS subdomain (such as example.com) before the '/'",
            "deviceMapping[0].devices[3].resourceName \"example.com/a/b\" must have the form"
                + " <domain>/<name> with exactly one '/'");
  }

  @Test
  void missingInstanceIdIsAnError() {
    assertThat(validate(mapping("[node-a]", "      - {resourceName: a.b/c}\n")).errors())
        .containsExactly("deviceMapping[0].devices[0].instanceID is required");
  }

  @Test
  void instanceIdThatIsNotAScalarIsAnErrorNamingIt() {
    assertThat(
            validate(mapping("[node-a]", "      - {resourceName: a.b/c, instanceID: [1]}\n"))
                .errors())
        .containsExactly("deviceMapping[0].devices[0].instanceID must be a string but is a list");
  }

  @Test
  void envNamesThatAreNotEnvironmentVariableNamesAreErrors() {
    String devices =
        "      - resourceName: a.b/c\n"
            + "        instanceID: a\n"
            + "        env: {GOOD_1: x, 1BAD: y, with-dash: z}\n";

    assertThat(validate(mapping("[node-a]", devices)).errors())
        .containsExactly(
            "deviceMapping[0].devices[0].env.1BAD is not a valid environment variable name"
                + " ([A-Za-z_][A-Za-z0-9_]*)",
            "deviceMapping[0].devices[0].env.with-dash is not a valid environment variable name"
                + " ([A-Za-z_][A-Za-z0-9_]*)");
  }

  @Test
  void envThatSetsIdOrTypeIsAnError() {
    String devices =
        "      - {resourceName: a.b/c, instanceID: a, env: {ID: x}}\n"
            + "      - {resourceName: a.b/c, instanceID: b, env: {TYPE: y}}\n";

    assertThat(validate(mapping("[node-a]", devices)).errors())
        .containsExactly(
            "deviceMapping[0].devices[0].env.ID is reserved: the handler sets ID to the"
                + " instanceID and TYPE to the resourceName",
            "deviceMapping[0].devices[1].env.TYPE is reserved: the handler sets ID to the"
                + " instanceID and TYPE to the resourceName");
  }

  @Test
  void missingDeviceMappingIsAnError() {
    assertThat(validate("").errors())
        .containsExactly(
            "deviceMapping is required: a list of {hosts: [...], devices: [...]} entries");
  }

  @Test
  void deviceMappingThatIsNotAListIsAnErrorNamingIt() {
    assertThat(validate("deviceMapping: {hosts: [a]}").errors())
        .containsExactly("deviceMapping must be a list but is a mapping");
  }

  @Test
  void emptyDeviceMappingOrDeviceListIsAWarning() {
    assertThat(validate("deviceMapping: []").warnings())
        .containsExactly("deviceMapping is empty: no node sees any device");
    assertThat(validate(mapping("[node-a]", "      []\n")).warnings())
        .containsExactly("deviceMapping[0].devices is empty: this mapping adds no device");
  }

  @Test
  void unknownKeysAtEveryLevelAreWarningsNamingThem() {
    String details =
        "deviceMapping:\n"
            + "  - hosts: [node-a]\n"
            + "    nodes: [node-b]\n"
            + "    devices:\n"
            + "      - {resourceName: a.b/c, instanceID: a, envs: {X: y}}\n"
            + "watch: true\n";

    Validation validation = validate(details);

    assertThat(validation.errors()).isEmpty();
    assertThat(validation.warnings())
        .containsExactlyInAnyOrder(
            "deviceMapping[0].devices[0].envs is not a known field; ignored",
            "deviceMapping[0].nodes is not a known field; ignored",
            "watch is not a known field; ignored");
  }

  @Test
  void unreadableYamlIsAnErrorNotAnException() {
    assertThat(validate("deviceMapping: [").errors())
        .singleElement()
        .asString()
        .startsWith("invalid YAML");
    assertThat(validate("- a").errors())
        .containsExactly("expected a YAML mapping but found a list");
  }

  @Test
  void unsafeYamlIsRejectedBeforeTheVerbatimReading() {
    assertThat(validate("deviceMapping: !!javax.script.ScriptEngineManager []").valid()).isFalse();
    assertThat(
            validate(
                    "a: &a [x]\nb: *a\nc: *a\nd: *a\ne: *a\nf: *a\ng: *a\nh: *a\ni: *a\n"
                        + "j: *a\nk: *a\nl: *a\n")
                .valid())
        .isFalse();
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    String devices =
        "      - {resourceName: bad, instanceID: a}\n"
            + "      - {resourceName: a.b/c, env: {1X: y}}\n";

    assertThat(validate(mapping("[]", devices)).errors()).hasSize(4);
  }

  @Test
  void startReportsTheSnapshotOnTheSchedulerNotOnTheCallingThread() throws Exception {
    RecordingListener listener = new RecordingListener();
    CountDownLatch schedulerBusy = new CountDownLatch(1);
    scheduler.execute(() -> awaitQuietly(schedulerBusy));

    try (Discovery discovery =
        handler.start(context("minikube", resource("spookd-walkthrough.yaml")), listener)) {
      assertThat(listener.snapshots()).as("nothing reported inside start()").isEmpty();
      schedulerBusy.countDown();
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots().isEmpty());
    }
    assertThat(listener.threads()).doesNotContain(Thread.currentThread());
    assertThat(listener.snapshots().get(0)).hasSize(2);
  }

  @Test
  void closingBeforeTheReportRunsMeansNothingIsEverReported() throws Exception {
    RecordingListener listener = new RecordingListener();
    CountDownLatch schedulerBusy = new CountDownLatch(1);
    scheduler.execute(() -> awaitQuietly(schedulerBusy));

    Discovery discovery =
        handler.start(context("minikube", resource("spookd-walkthrough.yaml")), listener);
    discovery.close();
    discovery.close();
    schedulerBusy.countDown();
    // A task queued after the report has run once the scheduler has drained the report.
    scheduler.schedule(() -> null, 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);

    assertThat(listener.snapshots()).isEmpty();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
