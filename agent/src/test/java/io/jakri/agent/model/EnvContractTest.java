package io.jakri.agent.model;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

public class EnvContractTest {

  /** The seeds live in ../shared beside the repository (CI has them there too). */
  public static List<String> spookdSeedEnvLines() throws Exception {
    Path seed = Path.of("..", "..", "shared", "seeds", "spookd-readme.txt");
    return Files.readAllLines(seed).stream()
        .map(String::strip)
        .filter(l -> l.startsWith("EXAMPLECOM_"))
        .toList();
  }

  @Test
  void classEnvReproducesTheSpookdSeedListing() throws Exception {
    Map<String, String> widget =
        EnvContract.mergedProperties(
            Map.of(
                "ID", "0001", "TYPE", "example.com/widget", "IP", "192.168.0.200", "PORT", "12345"),
            Map.of());
    Map<String, String> thing =
        EnvContract.mergedProperties(
            Map.of("ID", "A1234", "TYPE", "example.com/thingamajig"), Map.of());
    Map<String, String> env = new TreeMap<>();
    env.putAll(EnvContract.forClass("example.com/widget", List.of(widget)));
    env.putAll(EnvContract.forClass("example.com/thingamajig", List.of(thing)));
    List<String> lines = new ArrayList<>();
    env.forEach((k, v) -> lines.add(k + "=" + v));
    assertThat(lines).hasSize(14).containsExactlyElementsOf(spookdSeedEnvLines());
  }

  @Test
  void instanceEnvSetsEachPropertyPlainAndWithTheUpperCaseHash() {
    Map<String, String> env =
        EnvContract.forInstance("8120fe", Map.of("DEBUG_ECHO_DESCRIPTION", "foo0"));
    assertThat(env)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of("DEBUG_ECHO_DESCRIPTION", "foo0", "DEBUG_ECHO_DESCRIPTION_8120FE", "foo0"));
  }

  @Test
  void brokerPropertiesWinOverDeviceProperties() {
    Map<String, String> merged =
        EnvContract.mergedProperties(Map.of("A", "device", "B", "device"), Map.of("A", "broker"));
    assertThat(merged).containsEntry("A", "broker").containsEntry("B", "device");
  }

  @Test
  void invalidAndReservedDevicePropertiesNeverReachAContainer() {
    Map<String, String> device = new LinkedHashMap<>();
    device.put("LD_PRELOAD", "/evil.so");
    device.put("PATH", "/x");
    device.put("ld_library_path", "/y");
    device.put("JAVA_TOOL_OPTIONS", "-javaagent:x");
    device.put("KUBERNETES_SERVICE_HOST", "1.2.3.4");
    device.put("A=B", "c");
    device.put("9LIVES", "x");
    device.put("WITH SPACE", "x");
    device.put("NUL", "a\0b");
    device.put("HUGE", "x".repeat(EnvContract.MAX_VALUE_LENGTH + 1));
    device.put("GOOD_ONE", "ok");
    assertThat(EnvContract.mergedProperties(device, Map.of()))
        .containsExactlyInAnyOrderEntriesOf(Map.of("GOOD_ONE", "ok"));
  }

  @Test
  void classPrefixDropsDotsAndTurnsSlashAndDashIntoUnderscore() {
    assertThat(EnvContract.prefix("example.com/widget")).isEqualTo("EXAMPLECOM_WIDGET");
    assertThat(EnvContract.prefix("akri.sh/akri-debug-echo-foo"))
        .isEqualTo("AKRISH_AKRI_DEBUG_ECHO_FOO");
  }

  @Test
  void classEnvNumbersEveryDeviceAndRepeatsDeviceZeroUnprefixed() {
    Map<String, String> env =
        EnvContract.forClass(
            "example.com/widget", List.of(Map.of("ID", "a"), Map.of("ID", "b", "X", "1")));
    assertThat(env)
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "EXAMPLECOM_WIDGET_NUM_DEVICES", "2",
                "EXAMPLECOM_WIDGET_DEV0_ID", "a",
                "EXAMPLECOM_WIDGET_DEV1_ID", "b",
                "EXAMPLECOM_WIDGET_DEV1_X", "1",
                "EXAMPLECOM_WIDGET_ID", "a"));
  }

  @Test
  void aDevicesOwnEnvKeepsNamesKubernetesAcceptsAndDropsReservedAndInvalidOnes() {
    Map<String, String> env = new LinkedHashMap<>();
    env.put("SIMPLE_DEVICE_simple-device-node-a.example.com-0", "/dev/0");
    env.put("POSIX_NAME", "ok");
    env.put("LD_PRELOAD_simple-device-node-a-0", "/dev/0");
    env.put("ld_x", "y");
    env.put("PATH", "/x");
    env.put("0STARTS_WITH_DIGIT", "x");
    env.put("A=B", "c");
    env.put("WITH SPACE", "x");
    env.put("NUL", "a\0b");
    env.put("HUGE", "x".repeat(EnvContract.MAX_VALUE_LENGTH + 1));
    env.put("N".repeat(EnvContract.MAX_NAME_LENGTH + 1), "x");
    assertThat(EnvContract.deviceEnv(env))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                "SIMPLE_DEVICE_simple-device-node-a.example.com-0", "/dev/0", "POSIX_NAME", "ok"));
    assertThat(EnvContract.deviceEnvDropReason("LD_PRELOAD_simple-device-node-a-0", "/dev/0"))
        .contains("the name is reserved (it would change how programs in the container run)");
    assertThat(EnvContract.deviceEnvDropReason("A=B", "c"))
        .contains(
            "the name is not an env var name Kubernetes accepts ([-._A-Za-z][-._A-Za-z0-9]*)");
  }

  @Test
  void aDevicesOwnEnvIsBoundedLikeItsProperties() {
    Map<String, String> env = new TreeMap<>();
    for (int i = 0; i < EnvContract.MAX_PROPERTIES + 10; i++) {
      env.put(String.format("E_%04d", i), "v");
    }
    assertThat(EnvContract.deviceEnv(env)).hasSize(EnvContract.MAX_PROPERTIES);
  }
}
