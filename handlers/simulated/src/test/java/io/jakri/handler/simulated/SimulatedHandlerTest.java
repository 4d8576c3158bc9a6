package io.jakri.handler.simulated;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.DiscoveredDevice.DeviceSpec;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import io.jakri.handler.testkit.RecordingListener;
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
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SimulatedHandlerTest {

  private static final String NODE = "node-a";

  private final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  private final SimulatedHandler handler = new SimulatedHandler();

  @AfterEach
  void stopScheduler() {
    scheduler.shutdownNow();
  }

  private DiscoveryContext context(String details) {
    return new DiscoveryContext("sim", NODE, details, Map.of(), scheduler);
  }

  /** Starts discovery, waits for its snapshot and closes it. */
  private List<DiscoveredDevice> discover(String details) throws InvalidDetailsException {
    RecordingListener listener = new RecordingListener();
    try (Discovery discovery = handler.start(context(details), listener)) {
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots().isEmpty());
    }
    assertThat(listener.snapshots()).hasSize(1);
    return listener.snapshots().get(0);
  }

  private Validation validate(String details) {
    return handler.validate(context(details));
  }

  private static List<String> ids(List<DiscoveredDevice> devices) {
    return devices.stream().map(DiscoveredDevice::id).toList();
  }

  @Test
  void isNamedSimulatedAndAnswersToDebugEcho() {
    assertThat(handler.name()).isEqualTo("simulated");
    assertThat(handler.aliases()).containsExactly("debugEcho");
  }

  @Test
  void emptyDetailsGiveTwoUnsharedSimpleDevicesNamedAfterTheNode() throws Exception {
    List<DiscoveredDevice> devices = discover("");

    assertThat(ids(devices)).containsExactly("simple-device-node-a-0", "simple-device-node-a-1");
    assertThat(devices)
        .allSatisfy(
            device -> {
              assertThat(device.shared()).isFalse();
              assertThat(device.deviceClass()).isEmpty();
              assertThat(device.properties()).isEmpty();
              assertThat(device.annotations()).isEmpty();
              assertThat(device.deviceSpecs()).isEmpty();
              assertThat(device.mounts()).isEmpty();
            });
    assertThat(validate("")).isEqualTo(Validation.ok());
  }

  @Test
  void countAndIdPrefixShapeTheDeviceIds() throws Exception {
    assertThat(ids(discover("count: 3\nidPrefix: gpu\n")))
        .containsExactly("gpu-node-a-0", "gpu-node-a-1", "gpu-node-a-2");
  }

  @Test
  void countZeroReportsAnEmptySnapshot() throws Exception {
    assertThat(discover("count: 0")).isEmpty();
  }

  @Test
  void resourceNameBecomesTheDeviceClass() throws Exception {
    assertThat(discover("resourceName: example.com/simple-device"))
        .extracting(DiscoveredDevice::deviceClass)
        .containsOnly(Optional.of("example.com/simple-device"));
  }

  @Test
  void propertiesAreGivenToEveryDevice() throws Exception {
    assertThat(discover("properties:\n  COLOR: blue\n  SPEED: 3\n"))
        .extracting(DiscoveredDevice::properties)
        .containsOnly(Map.of("COLOR", "blue", "SPEED", "3"));
  }

  @Test
  void sharedIsPassedToEveryDevice() throws Exception {
    assertThat(discover("shared: true")).extracting(DiscoveredDevice::shared).containsOnly(true);
  }

  @Test
  void envPrefixNamesOneEnvVarPerDeviceAfterItsIdWithItsIndexAsDevicePath() throws Exception {
    List<DiscoveredDevice> devices = discover("envPrefix: SIMPLE_DEVICE");
    assertThat(devices)
        .extracting(DiscoveredDevice::env)
        .containsExactly(
            Map.of("SIMPLE_DEVICE_simple-device-node-a-0", "/dev/0"),
            Map.of("SIMPLE_DEVICE_simple-device-node-a-1", "/dev/1"));
    // Not a property: the agent would rename it per resource.
    assertThat(devices).extracting(DiscoveredDevice::properties).containsOnly(Map.of());
  }

  @Test
  void envPrefixUsesTheIdPrefixAndTheDescriptionsAsDeviceIds() throws Exception {
    assertThat(discover("envPrefix: DEV\nidPrefix: gpu"))
        .extracting(DiscoveredDevice::env)
        .containsExactly(
            Map.of("DEV_gpu-node-a-0", "/dev/0"), Map.of("DEV_gpu-node-a-1", "/dev/1"));
    assertThat(discover("envPrefix: DEV\ndescriptions: [foo0, foo1]\nshared: false"))
        .extracting(DiscoveredDevice::env)
        .containsExactly(Map.of("DEV_foo0", "/dev/0"), Map.of("DEV_foo1", "/dev/1"));
  }

  @Test
  void withoutPrefixesNoEnvAnnotationOrDeviceFileIsGiven() throws Exception {
    assertThat(discover("count: 2"))
        .allSatisfy(
            device -> {
              assertThat(device.env()).isEmpty();
              assertThat(device.annotations()).isEmpty();
              assertThat(device.deviceSpecs()).isEmpty();
            });
  }

  @Test
  void annotationPrefixNamesOneEmptyAnnotationPerDeviceAfterItsId() throws Exception {
    assertThat(discover("annotationPrefix: example.com"))
        .extracting(DiscoveredDevice::annotations)
        .containsExactly(
            Map.of("example.com-simple-device-node-a-0", ""),
            Map.of("example.com-simple-device-node-a-1", ""));
  }

  @Test
  void deviceFilePrefixMapsTheHostDeviceFileToTheSamePathInTheContainer() throws Exception {
    assertThat(discover("deviceFilePrefix: simple"))
        .extracting(DiscoveredDevice::deviceSpecs)
        .containsExactly(
            List.of(new DeviceSpec("/dev/simple-0", "/dev/simple-0", "rw")),
            List.of(new DeviceSpec("/dev/simple-1", "/dev/simple-1", "rw")));
  }

  @Test
  void descriptionsGiveOneDevicePerDescriptionWithTheDescriptionAsIdAndProperty() throws Exception {
    List<DiscoveredDevice> devices =
        discover("descriptions:\n  - foo0\n  - foo1\nshared: true\nproperties: {A: b}\n");

    assertThat(ids(devices)).containsExactly("foo0", "foo1");
    assertThat(devices)
        .extracting(DiscoveredDevice::properties)
        .containsExactly(
            Map.of("DEBUG_ECHO_DESCRIPTION", "foo0", "A", "b"),
            Map.of("DEBUG_ECHO_DESCRIPTION", "foo1", "A", "b"));
    assertThat(devices).extracting(DiscoveredDevice::shared).containsOnly(true);
  }

  @Test
  void descriptionsTogetherWithCountOrIdPrefixWarnThatThoseAreUnused() throws Exception {
    Validation validation = validate("descriptions: [foo0]\ncount: 5\nidPrefix: x\n");

    assertThat(validation.errors()).isEmpty();
    assertThat(validation.warnings())
        .containsExactlyInAnyOrder(
            "count is not used when descriptions is set (one device per description)",
            "idPrefix is not used when descriptions is set (one device per description)");
    assertThat(ids(discover("descriptions: [foo0]\ncount: 5\n"))).containsExactly("foo0");
  }

  @Test
  void emptyDescriptionsListMeansNoDevices() throws Exception {
    assertThat(discover("descriptions: []")).isEmpty();
  }

  @Test
  void unknownKeysAreWarningsNamingThem() {
    Validation validation = validate("count: 1\nnumberDevices: 3\nresource_name: x\n");

    assertThat(validation.valid()).isTrue();
    assertThat(validation.warnings())
        .containsExactly(
            "numberDevices is not a known field; ignored",
            "resource_name is not a known field; ignored");
  }

  @Test
  void countAboveTheLimitIsAnErrorNamingFieldAndLimit() {
    assertThat(validate("count: 100001").errors())
        .containsExactly("count must be between 0 and 100000 but is 100001");
    assertThat(validate("count: 100000").valid()).isTrue();
  }

  @Test
  void negativeCountIsAnError() {
    assertThat(validate("count: -1").errors())
        .containsExactly("count must be between 0 and 100000 but is -1");
  }

  @Test
  void countThatIsNotANumberIsAnErrorNamingIt() {
    assertThat(validate("count: many").errors())
        .containsExactly("count must be an integer but is the string \"many\"");
  }

  @Test
  void everyProblemIsReportedAtOnce() {
    Validation validation = validate("count: -5\nshared: maybe\nenvPrefix: 1BAD\n");

    assertThat(validation.errors())
        .hasSize(3)
        .anySatisfy(error -> assertThat(error).startsWith("count "))
        .anySatisfy(error -> assertThat(error).startsWith("shared "))
        .anySatisfy(error -> assertThat(error).startsWith("envPrefix "));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "example.com/simple-device",
        "a/b",
        "sub.example.com/Widget_2.x",
        "example.com/a123456789012345678901234567890123456789012345678901234567890bc"
      })
  void validExtendedResourceNamesAreAccepted(String name) {
    assertThat(validate("resourceName: " + name).errors()).isEmpty();
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "simple-device",
        "example.com/a/b",
        "Example.com/widget",
        "kubernetes.io/widget",
        "node.kubernetes.io/widget",
        "example.com/",
        "/widget",
        "example.com/-widget",
        "example.com/wid get",
        "example.com/a123456789012345678901234567890123456789012345678901234567890bcd"
      })
  void invalidExtendedResourceNamesAreErrorsNamingTheField(String name) {
    assertThat(validate("resourceName: \"" + name + "\"").errors())
        .singleElement()
        .asString()
        .startsWith("resourceName \"" + name + "\" must");
  }

  @Test
  void envPrefixMustBeAnEnvironmentVariableName() {
    assertThat(validate("envPrefix: my-device").errors())
        .containsExactly(
            "envPrefix \"my-device\" must be an environment variable name"
                + " ([A-Za-z_][A-Za-z0-9_]*)");
  }

  @Test
  void annotationPrefixMustBeLettersDigitsAndPunctuationWithoutSpaces() {
    assertThat(validate("annotationPrefix: \"example com\"").errors())
        .containsExactly(
            "annotationPrefix \"example com\" must be 1 to 253 letters, digits, '.', '_', '/' and"
                + " '-', starting with a letter or digit (such as example.com)");
    assertThat(validate("annotationPrefix: Example.com/Simple_Device").errors()).isEmpty();
  }

  @Test
  void envPrefixWhoseEnvNamesKubernetesWouldRefuseIsAnErrorNamingTheIdField() {
    assertThat(validate("envPrefix: DEV\nidPrefix: \"my device\"").errors())
        .containsExactly(
            "envPrefix \"DEV\" with idPrefix gives env var names such as \"DEV_my device-node-0\""
                + " (<envPrefix>_<device id>) that Kubernetes does not accept: only letters,"
                + " digits, '_', '-' and '.', not starting with a digit");
    assertThat(validate("envPrefix: DEV\ndescriptions: [ok, \"a=b\"]").errors())
        .singleElement()
        .asString()
        .startsWith(
            "envPrefix \"DEV\" with descriptions[1] gives env var names such as \"DEV_a=b\"");
  }

  @Test
  void deviceFilePrefixMustNotLeaveDev() {
    assertThat(validate("deviceFilePrefix: ../etc/passwd").errors())
        .singleElement()
        .asString()
        .startsWith("deviceFilePrefix \"../etc/passwd\" must be a file name");
  }

  @Test
  void propertyNamesMustBeEnvironmentVariableNames() {
    assertThat(validate("properties:\n  good: 1\n  not-ok: 2\n").errors())
        .containsExactly(
            "properties.not-ok is not a valid environment variable name ([A-Za-z_][A-Za-z0-9_]*)");
  }

  @Test
  void propertyThatClashesWithTheDescriptionPropertyIsAnError() {
    assertThat(validate("descriptions: [a]\nproperties: {DEBUG_ECHO_DESCRIPTION: x}\n").errors())
        .containsExactly(
            "properties.DEBUG_ECHO_DESCRIPTION clashes with the property the handler sets from"
                + " descriptions");
  }

  @Test
  void propertyNamedLikeEnvPrefixIsFineAsEnvPrefixSetsNoProperty() {
    assertThat(validate("envPrefix: DEV\nproperties: {DEV: x}\n").errors()).isEmpty();
  }

  @Test
  void repeatedDescriptionIsAnErrorNamingBothEntries() {
    assertThat(validate("descriptions: [foo0, foo1, foo0]").errors())
        .containsExactly(
            "descriptions[2] repeats descriptions[0] (\"foo0\"): descriptions are device ids and"
                + " must be unique");
  }

  @Test
  void blankDescriptionIsAnError() {
    assertThat(validate("descriptions: [\"\"]").errors())
        .containsExactly("descriptions[0] must not be empty: it is the device id");
  }

  @Test
  void emptyIdPrefixIsAnError() {
    assertThat(validate("idPrefix: \"\"").errors())
        .containsExactly("idPrefix must be 1 to 253 characters");
  }

  @ParameterizedTest
  @ValueSource(strings = {"count: [", "- a\n- b\n", "count: 1\ncount: 2\n", "!!java.io.File x"})
  void unreadableYamlIsAnErrorNotAnException(String details) {
    Validation validation = validate(details);

    assertThat(validation.valid()).isFalse();
    assertThat(validation.errors()).singleElement().asString().isNotBlank();
  }

  @Test
  void startRejectsInvalidDetailsWithEveryErrorInTheMessage() {
    assertThatThrownBy(() -> handler.start(context("count: -1\nenvPrefix: 9"), listenerStub()))
        .isInstanceOf(InvalidDetailsException.class)
        .hasMessageContaining("count must be between 0 and 100000 but is -1")
        .hasMessageContaining("envPrefix \"9\"");
  }

  @Test
  void startReportsTheSnapshotOnTheSchedulerNotOnTheCallingThread() throws Exception {
    RecordingListener listener = new RecordingListener();
    CountDownLatch schedulerBusy = new CountDownLatch(1);
    scheduler.execute(() -> awaitQuietly(schedulerBusy));

    try (Discovery discovery = handler.start(context("count: 1"), listener)) {
      assertThat(listener.snapshots()).as("nothing reported inside start()").isEmpty();
      schedulerBusy.countDown();
      await().atMost(Duration.ofSeconds(5)).until(() -> !listener.snapshots().isEmpty());
    }
    assertThat(listener.threads()).doesNotContain(Thread.currentThread());
    assertThat(ids(listener.snapshots().get(0))).containsExactly("simple-device-node-a-0");
  }

  @Test
  void closingBeforeTheReportRunsMeansNothingIsEverReported() throws Exception {
    RecordingListener listener = new RecordingListener();
    CountDownLatch schedulerBusy = new CountDownLatch(1);
    scheduler.execute(() -> awaitQuietly(schedulerBusy));

    Discovery discovery = handler.start(context("count: 1"), listener);
    discovery.close();
    discovery.close();
    schedulerBusy.countDown();
    // A task queued after the report has run once the scheduler has drained the report.
    scheduler.schedule(() -> null, 0, TimeUnit.MILLISECONDS).get(5, TimeUnit.SECONDS);

    assertThat(listener.snapshots()).isEmpty();
    assertThat(listener.failures()).isEmpty();
  }

  @Test
  void eachStartIsIndependentOfTheOthers() throws Exception {
    RecordingListener first = new RecordingListener();
    RecordingListener second = new RecordingListener();
    try (Discovery a = handler.start(context("count: 1"), first);
        Discovery b = handler.start(context("descriptions: [x]"), second)) {
      await()
          .atMost(Duration.ofSeconds(5))
          .until(() -> !first.snapshots().isEmpty() && !second.snapshots().isEmpty());
    }
    assertThat(ids(first.snapshots().get(0))).containsExactly("simple-device-node-a-0");
    assertThat(ids(second.snapshots().get(0))).containsExactly("x");
  }

  private static RecordingListener listenerStub() {
    return new RecordingListener();
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await(10, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
