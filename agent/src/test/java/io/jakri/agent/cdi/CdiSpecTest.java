package io.jakri.agent.cdi;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.allocation.InstanceContract;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.EnvContract;
import io.jakri.agent.model.LocalDevice;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

class CdiSpecTest {

  private static final ObjectMapper JSON = new ObjectMapper();

  static LocalDevice device(
      String configuration,
      String instance,
      int capacity,
      Map<String, String> properties,
      Map<String, String> brokerProperties,
      List<DiscoveredDevice.Mount> mounts,
      List<DiscoveredDevice.DeviceSpec> nodes) {
    return new LocalDevice(
        instance,
        new ConfigurationSpec(
            configuration,
            "simulated",
            "",
            List.of(),
            capacity,
            brokerProperties,
            Optional.empty()),
        new DiscoveredDevice(
            "dev-0", properties, mounts, nodes, Map.of("x.io/a", "b"), Optional.empty(), true),
        true);
  }

  private static CdiSpec.Rendered render(LocalDevice d) {
    return CdiSpec.render(
        d.instanceName(),
        d.configuration().name(),
        d.configuration().capacity(),
        InstanceContract.of(d));
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void specCarriesTheInstanceContractOnceAndOneDevicePerSlot() throws IOException {
    LocalDevice d =
        device(
            "cam",
            "cam-a1b2c3",
            3,
            Map.of("URL", "rtsp://10.0.0.9/live", "MODEL", "x"),
            Map.of("MODEL", "broker-wins"),
            List.of(new DiscoveredDevice.Mount("/etc/cam", "/host/cam", true)),
            List.of(new DiscoveredDevice.DeviceSpec("/dev/video0", "/dev/video3", "rw")));

    CdiSpec.Rendered rendered = render(d);
    JsonNode spec = JSON.readTree(rendered.json());

    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    assertThat(rendered.dropped()).isEmpty();
    assertThat(spec.path("cdiVersion").asText()).isEqualTo("0.5.0");
    assertThat(spec.path("kind").asText()).isEqualTo("akri.sh/cam").isEqualTo(CdiNames.kind("cam"));
    assertThat(spec.path("devices")).hasSize(3);
    for (int n = 0; n < 3; n++) {
      JsonNode device = spec.path("devices").get(n);
      assertThat(device.path("name").asText()).isEqualTo("cam-a1b2c3-" + n);
      assertThat(texts(device.path("containerEdits").path("env")))
          .containsExactly("JAKRI_SLOT_A1B2C3_" + n + "=cam-a1b2c3-" + n);
    }
    // The spec-wide edits are exactly the Instance resource's Allocate answer.
    ContainerAllocateResponse allocate = InstanceContract.of(d).build();
    List<String> env = new ArrayList<>();
    new TreeMap<>(allocate.getEnvsMap()).forEach((k, v) -> env.add(k + "=" + v));
    JsonNode edits = spec.path("containerEdits");
    assertThat(texts(edits.path("env")))
        .isEqualTo(env)
        .containsExactly(
            "MODEL=broker-wins",
            "MODEL_A1B2C3=broker-wins",
            "URL=rtsp://10.0.0.9/live",
            "URL_A1B2C3=rtsp://10.0.0.9/live");
    assertThat(edits.path("deviceNodes")).hasSize(1);
    assertThat(edits.path("deviceNodes").get(0).path("path").asText()).isEqualTo("/dev/video0");
    assertThat(edits.path("deviceNodes").get(0).path("hostPath").asText()).isEqualTo("/dev/video3");
    assertThat(edits.path("deviceNodes").get(0).path("permissions").asText()).isEqualTo("rw");
    JsonNode mount = edits.path("mounts").get(0);
    assertThat(mount.path("hostPath").asText()).isEqualTo("/host/cam");
    assertThat(mount.path("containerPath").asText()).isEqualTo("/etc/cam");
    assertThat(texts(mount.path("options"))).contains("ro", "rbind");
    // Container annotations are no CDI edit.
    assertThat(spec.has("annotations")).isFalse();
  }

  @Test
  void aDevicesOwnEnvIsInTheSpecAsAllocateGivesIt() throws IOException {
    LocalDevice d =
        new LocalDevice(
            "cam-a1b2c3",
            new ConfigurationSpec("cam", "simulated", "", List.of(), 1, Map.of(), Optional.empty()),
            new DiscoveredDevice(
                "dev-0",
                Map.of("MODEL", "x"),
                List.of(),
                List.of(),
                Map.of(),
                Optional.empty(),
                true,
                Map.of("SIMPLE_DEVICE_node-a-0", "/dev/0", "LD_PRELOAD", "/evil.so")),
            true);

    CdiSpec.Rendered rendered = render(d);

    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    assertThat(texts(JSON.readTree(rendered.json()).path("containerEdits").path("env")))
        .containsExactly("MODEL=x", "MODEL_A1B2C3=x", "SIMPLE_DEVICE_node-a-0=/dev/0");
  }

  @Test
  void theSameDeviceAlwaysRendersTheSameBytes() {
    LocalDevice d =
        device(
            "cam",
            "cam-a1b2c3",
            2,
            Map.of("A", "1", "B", "2", "C", "3"),
            Map.of(),
            List.of(),
            List.of());
    assertThat(render(d).json()).isEqualTo(render(d).json());
  }

  @Test
  void aDottedConfigurationNameNeedsVersion060AndADigitFirstDeviceNameIsFine() {
    LocalDevice dotted =
        device(
            "cams.floor1",
            "cams.floor1-a1b2c3",
            1,
            Map.of("A", "1"),
            Map.of(),
            List.of(),
            List.of());
    CdiSpec.Rendered rendered = render(dotted);
    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    assertThat(new String(rendered.json(), StandardCharsets.UTF_8))
        .contains("\"cdiVersion\":\"0.6.0\"");
    assertThat(CdiSpec.version("cam")).isEqualTo("0.5.0");
  }

  @Test
  void hostilePropertyValuesStayValidJsonAndAreBoundedLikeEnv() throws IOException {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("NEWLINE", "a\nb\r\nINJECTED=1");
    properties.put("QUOTES", "\"},{\"name\":\"x\"}]} \\ \u0001 \u2028 é 😀");
    properties.put("SURROGATE", "half \ud800 of a pair");
    properties.put("HUGE", "x".repeat(EnvContract.MAX_VALUE_LENGTH + 1));
    properties.put("LONGEST", "y".repeat(EnvContract.MAX_VALUE_LENGTH));
    properties.put("LD_PRELOAD", "/evil.so");
    properties.put("not a name", "v");
    for (int i = 0; i < EnvContract.MAX_PROPERTIES + 50; i++) {
      properties.put(String.format("ZZ%04d", i), "v" + i); // sorted after the others
    }
    LocalDevice d = device("cam", "cam-a1b2c3", 2, properties, Map.of(), List.of(), List.of());

    CdiSpec.Rendered rendered = render(d);

    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    JsonNode spec = JSON.readTree(rendered.json());
    Map<String, String> env = new TreeMap<>();
    for (JsonNode e : spec.path("containerEdits").path("env")) {
      String entry = e.asText();
      env.put(entry.substring(0, entry.indexOf('=')), entry.substring(entry.indexOf('=') + 1));
    }
    // Exactly what Allocate gives (surrogate aside): the same rules and bounds as env.
    Map<String, String> allocate = new TreeMap<>(InstanceContract.of(d).getEnvsMap());
    assertThat(env.keySet()).isEqualTo(allocate.keySet());
    assertThat(env).doesNotContainKeys("HUGE", "LD_PRELOAD", "not a name", "INJECTED");
    assertThat(env.size()).isLessThanOrEqualTo(2 * EnvContract.MAX_PROPERTIES);
    assertThat(env.get("NEWLINE")).isEqualTo("a\nb\r\nINJECTED=1");
    assertThat(env.get("QUOTES")).isEqualTo(properties.get("QUOTES"));
    assertThat(env.get("SURROGATE")).isEqualTo("half ? of a pair");
    assertThat(env.get("LONGEST")).hasSize(EnvContract.MAX_VALUE_LENGTH);
    // Bounded: at most MAX_PROPERTIES names of at most 253 characters and values of 4,096, twice.
    assertThat(rendered.json().length)
        .isLessThan(
            2
                    * EnvContract.MAX_PROPERTIES
                    * (EnvContract.MAX_NAME_LENGTH + EnvContract.MAX_VALUE_LENGTH + 8)
                + 1000);
  }

  @Test
  void mountsAndDeviceNodesCdiCannotCarryAreLeftOutEachWithItsRule() {
    LocalDevice d =
        device(
            "cam",
            "cam-a1b2c3",
            1,
            Map.of(),
            Map.of(),
            List.of(
                new DiscoveredDevice.Mount("", "/host", false),
                new DiscoveredDevice.Mount("/in", "/ho\0st", false),
                new DiscoveredDevice.Mount("/ok", "/host/ok", false)),
            List.of(
                new DiscoveredDevice.DeviceSpec("/dev/a", "/dev/a", "rwx"),
                new DiscoveredDevice.DeviceSpec(
                    "/dev/" + "b".repeat(CdiSpec.MAX_PATH_LENGTH), "/dev/b", "r"),
                new DiscoveredDevice.DeviceSpec("/dev/c", "/dev/c", "rwm")));

    CdiSpec.Rendered rendered = render(d);

    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    assertThat(rendered.dropped())
        .hasSize(4)
        .anySatisfy(m -> assertThat(m).contains("mount \"\"").contains("empty"))
        .anySatisfy(m -> assertThat(m).contains("mount \"/in\"").contains("NUL"))
        .anySatisfy(m -> assertThat(m).contains("\"/dev/a\"").contains("r, w, m"))
        .anySatisfy(m -> assertThat(m).contains("longer than 4096"));
    String json = new String(rendered.json(), StandardCharsets.UTF_8);
    assertThat(json).contains("/host/ok").contains("/dev/c").doesNotContain("/dev/a\"");
  }

  @Test
  void aSpecWithoutEnvMountsOrNodesStillGivesEveryDeviceAnEdit() throws IOException {
    LocalDevice bare = device("cam", "cam-a1b2c3", 2, Map.of(), Map.of(), List.of(), List.of());
    CdiSpec.Rendered rendered = render(bare);
    assertThat(CdiSchema.problems(rendered.json())).isEmpty();
    assertThat(JSON.readTree(rendered.json()).has("containerEdits")).isFalse();
  }

  @Test
  void configurationNamesThatCannotNameACdiKindAreRefusedWithTheRule() {
    assertThat(CdiSpec.kindProblem("cam")).isEmpty();
    assertThat(CdiSpec.kindProblem("cams.floor-1")).isEmpty();
    assertThat(CdiSpec.kindProblem("1cam")).get().asString().contains("start with a letter");
    assertThat(CdiSpec.kindProblem("c".repeat(64))).get().asString().contains("longer than 63");
  }

  @Test
  void theSchemaCheckRejectsWhatRuntimesReject() throws IOException {
    try (InputStream example = getClass().getResourceAsStream("/cdi-schema/spec-example.json")) {
      assertThat(CdiSchema.problems(example.readAllBytes())).isEmpty();
    }
    assertThat(
            CdiSchema.problems(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"akri.sh/x\"}"
                    .getBytes(StandardCharsets.UTF_8)))
        .anySatisfy(p -> assertThat(p).startsWith("schema:").contains("devices"));
    assertThat(
            CdiSchema.problems(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"akri.sh/x\",\"devices\":[{\"name\":\"d\",\"containerEdits\":{\"env\":[1]}}]}"
                    .getBytes(StandardCharsets.UTF_8)))
        .isNotEmpty();
    assertThat(
            CdiSchema.problems(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"akri.sh/x.y\",\"devices\":[{\"name\":\"d\",\"containerEdits\":{\"env\":[\"A=1\"]}}]}"
                    .getBytes(StandardCharsets.UTF_8)))
        .anySatisfy(p -> assertThat(p).contains("lower than the 0.6.0"));
    assertThat(
            CdiSchema.problems(
                "{\"cdiVersion\":\"0.5.0\",\"kind\":\"akri.sh/x\",\"devices\":[{\"name\":\"d\",\"containerEdits\":{}}]}"
                    .getBytes(StandardCharsets.UTF_8)))
        .anySatisfy(p -> assertThat(p).contains("no edits"));
  }
}
