package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.discovery.DiscoveryManager;
import io.jakri.crd.InstanceNames;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.DeviceSpecInfo;
import io.jakri.kubelet.emulator.Pod;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The simple device plugin seed ({@code simple-device-plugin-readme.txt}) through the kubelet
 * emulator: what a container receives (envs, annotations, device nodes) for each of the seed's
 * parameters, on the class resource and on the Instance resource. Where the seed spells a value out
 * (the env value, the device file path, the device id) the expectation is read from the seed's own
 * text; where it does not (the env and annotation names) it is the original program's ({@code
 * <ENV_PREFIX>_<device id>}, {@code <ANNOTATION_PREFIX>-<device id>} with an empty value).
 *
 * <p>Each test has its own Configuration (count 2, capacity 2) on one agent: a pod asking for two
 * devices of the class gets one slot of each device, a second pod the other slot of device 1
 * through its Instance resource.
 */
class SimpleDevicePluginSeedIT {

  private static final String NODE = "node-a";

  @TempDir static Path tmp;
  private static TestAgent agent;
  private static String seed;

  @BeforeAll
  static void start() throws Exception {
    seed =
        Files.readString(Path.of("..", "..", "shared", "seeds", "simple-device-plugin-readme.txt"));
    agent = TestAgent.start(tmp, NODE, Duration.ofSeconds(60), true);
  }

  @AfterAll
  static void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  /** What the two containers got: the class pod's and the Instance pod's. */
  private record Given(ContainerAllocation classContainer, ContainerAllocation instanceContainer) {}

  /**
   * Applies Configuration {@code name} with {@code details}, admits a pod asking for 2 devices of
   * {@code resource} and then one asking for device 1's Instance resource.
   */
  private static Given given(String name, String resource, String details) throws Exception {
    agent.writeConfig(name + ".yaml", TestAgent.configuration(name, "simulated", 2, details));
    agent.awaitAllocatable(resource, 4);
    String instanceResource = "akri.sh/" + instanceOf(name, 1);
    agent.awaitAllocatable(instanceResource, 2);
    ContainerAllocation byClass =
        agent
            .kubelet()
            .admit(Pod.of("default", name + "-class", Container.of("c", resource, 2)))
            .container("c");
    assertThat(byClass.deviceIds(resource))
        .extracting(slot -> slot.substring(0, slot.lastIndexOf('-')))
        .containsExactlyInAnyOrder(instanceOf(name, 0), instanceOf(name, 1));
    ContainerAllocation byInstance =
        agent
            .kubelet()
            .admit(Pod.of("default", name + "-instance", Container.of("c", instanceResource, 1)))
            .container("c");
    return new Given(byClass, byInstance);
  }

  private static String instanceOf(String configuration, int index) {
    return InstanceNames.instanceName(configuration, deviceId("simple-device", index), false, NODE);
  }

  /** The seed's device id: {@code <device-id-prefix>-<node-name>-<index-of-the-device>}. */
  private static String deviceId(String idPrefix, int index) {
    return seedTemplate(
            "the eventual device id reported to the kubelet will be:\\s*(<[^>]+>-<[^>]+>-<[^>]+>)")
        .replace("<device-id-prefix>", idPrefix)
        .replace("<node-name>", NODE)
        .replace("<index-of-the-device>", Integer.toString(index));
  }

  /** The seed's env value: {@code /dev/<index-of-the-device>}. */
  private static String envValue(int index) {
    return seedTemplate("The value of the variable will be:\\s*(/dev/<[^>]+>)")
        .replace("<index-of-the-device>", Integer.toString(index));
  }

  /** The seed's device file: {@code /dev/<device prefix>-<device-index>}, same in the container. */
  private static DeviceSpecInfo deviceFile(String prefix, int index) {
    String path =
        seedTemplate("the host path for the mapped device will be\\s*(/dev/<[^>]+>-<[^>]+>)")
            .replace("<device prefix>", prefix)
            .replace("<device-index>", Integer.toString(index));
    assertThat(seed).contains("and the container path will be the same");
    return new DeviceSpecInfo(path, path, "rw");
  }

  private static String seedTemplate(String regex) {
    Matcher m = Pattern.compile(regex).matcher(seed);
    assertThat(m.find()).as("the seed says %s", regex).isTrue();
    return m.group(1);
  }

  @Test
  void envPrefixGivesOneEnvVarPerDeviceNamedAfterItsIdWithTheSeedsValue() throws Exception {
    Given given =
        given(
            "env",
            "example.com/env-device",
            "resourceName: example.com/env-device\n" + "envPrefix: SIMPLE_DEVICE");

    assertThat(given.classContainer().envs())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "SIMPLE_DEVICE_" + deviceId("simple-device", 0),
                envValue(0),
                "SIMPLE_DEVICE_" + deviceId("simple-device", 1),
                envValue(1),
                "EXAMPLECOM_ENV_DEVICE_NUM_DEVICES",
                "2"));
    assertThat(given.classContainer().envs())
        .containsEntry("SIMPLE_DEVICE_simple-device-node-a-0", "/dev/0");
    assertThat(given.instanceContainer().envs())
        .containsExactlyEntriesOf(
            Map.of("SIMPLE_DEVICE_" + deviceId("simple-device", 1), envValue(1)));
    assertThat(given.classContainer().annotations()).isEmpty();
    assertThat(given.classContainer().devices()).isEmpty();
  }

  @Test
  void envPrefixAlsoNamesTheEnvOnTheConfigurationsDefaultClass() throws Exception {
    Given given = given("default-class", "akri.sh/default-class", "envPrefix: SIMPLE_DEVICE");

    assertThat(given.classContainer().envs())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "SIMPLE_DEVICE_" + deviceId("simple-device", 0),
                envValue(0),
                "SIMPLE_DEVICE_" + deviceId("simple-device", 1),
                envValue(1),
                "AKRISH_DEFAULT_CLASS_NUM_DEVICES",
                "2"));
  }

  @Test
  void annotationPrefixGivesOneEmptyAnnotationPerDeviceNamedAfterItsId() throws Exception {
    Given given =
        given(
            "annotated",
            "example.com/annotated-device",
            "resourceName: example.com/annotated-device\nannotationPrefix: example.com");

    assertThat(given.classContainer().annotations())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "example.com-" + deviceId("simple-device", 0), "",
                "example.com-" + deviceId("simple-device", 1), ""));
    assertThat(given.instanceContainer().annotations())
        .containsExactlyEntriesOf(Map.of("example.com-" + deviceId("simple-device", 1), ""));
    assertThat(given.classContainer().envs())
        .containsExactlyEntriesOf(Map.of("EXAMPLECOM_ANNOTATED_DEVICE_NUM_DEVICES", "2"));
    assertThat(given.classContainer().devices()).isEmpty();
  }

  @Test
  void deviceFilePrefixMapsTheSeedsHostPathToTheSamePathInTheContainer() throws Exception {
    Given given =
        given(
            "files",
            "example.com/file-device",
            "resourceName: example.com/file-device\ndeviceFilePrefix: simple");

    assertThat(given.classContainer().devices())
        .containsExactlyInAnyOrder(deviceFile("simple", 0), deviceFile("simple", 1));
    assertThat(given.classContainer().devices())
        .contains(new DeviceSpecInfo("/dev/simple-0", "/dev/simple-0", "rw"));
    assertThat(given.instanceContainer().devices()).containsExactly(deviceFile("simple", 1));
    assertThat(given.classContainer().envs())
        .containsExactlyEntriesOf(Map.of("EXAMPLECOM_FILE_DEVICE_NUM_DEVICES", "2"));
    assertThat(given.classContainer().annotations()).isEmpty();
  }

  @Test
  void withTheSeedsEmptyDefaultsNoEnvAnnotationOrDeviceFileIsCreated() throws Exception {
    Given given =
        given("plain", "example.com/plain-device", "resourceName: example.com/plain-device");

    assertThat(given.classContainer().envs())
        .containsExactlyEntriesOf(Map.of("EXAMPLECOM_PLAIN_DEVICE_NUM_DEVICES", "2"));
    assertThat(given.instanceContainer().envs()).isEmpty();
    for (ContainerAllocation c : List.of(given.classContainer(), given.instanceContainer())) {
      assertThat(c.annotations()).isEmpty();
      assertThat(c.devices()).isEmpty();
    }
  }

  @Test
  void theExamplesDetailsGiveAllThreeTogetherAndNoneOfTheOldPropertyNames() throws Exception {
    Given given =
        given(
            "simple-device",
            "example.com/simple-device",
            """
            count: 2
            idPrefix: simple-device
            resourceName: example.com/simple-device
            envPrefix: SIMPLE_DEVICE
            annotationPrefix: example.com
            deviceFilePrefix: simple
            """);

    ContainerAllocation c = given.classContainer();
    assertThat(c.envs())
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "SIMPLE_DEVICE_simple-device-node-a-0", "/dev/0",
                "SIMPLE_DEVICE_simple-device-node-a-1", "/dev/1",
                "EXAMPLECOM_SIMPLE_DEVICE_NUM_DEVICES", "2"));
    assertThat(c.envs())
        .doesNotContainKeys("EXAMPLECOM_SIMPLE_DEVICE_SIMPLE_DEVICE", "SIMPLE_DEVICE");
    assertThat(c.annotations())
        .containsOnlyKeys(
            "example.com-simple-device-node-a-0", "example.com-simple-device-node-a-1");
    assertThat(c.devices())
        .containsExactlyInAnyOrder(
            new DeviceSpecInfo("/dev/simple-0", "/dev/simple-0", "rw"),
            new DeviceSpecInfo("/dev/simple-1", "/dev/simple-1", "rw"));
  }

  @Test
  void envPrefixMakingReservedNamesGivesNothingAndIsLoggedOncePerName() throws Exception {
    try (LogCapture logs = LogCapture.of(DiscoveryManager.class)) {
      Given given =
          given(
              "preload",
              "example.com/preload-device",
              "resourceName: example.com/preload-device\n" + "envPrefix: LD_PRELOAD");

      assertThat(given.classContainer().envs())
          .containsExactlyEntriesOf(Map.of("EXAMPLECOM_PRELOAD_DEVICE_NUM_DEVICES", "2"));
      assertThat(given.instanceContainer().envs()).isEmpty();
      await()
          .atMost(Duration.ofSeconds(5))
          .untilAsserted(
              () ->
                  assertThat(
                          logs.messages().stream()
                              .filter(l -> l.contains("configuration preload: device env")))
                      .containsExactlyInAnyOrder(
                          "configuration preload: device env \"LD_PRELOAD_simple-device-node-a-0\""
                              + " is not given to containers: the name is reserved (it would"
                              + " change how programs in the container run)",
                          "configuration preload: device env \"LD_PRELOAD_simple-device-node-a-1\""
                              + " is not given to containers: the name is reserved (it would"
                              + " change how programs in the container run)"));
    }
  }
}
