package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.allocation.InstanceContract;
import io.jakri.agent.cdi.CdiNames;
import io.jakri.agent.cdi.CdiSpecs;
import io.jakri.agent.model.ConfigurationSpec;
import io.jakri.agent.model.LocalDevice;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The agent's CDI specs as a container runtime reads them: a peer built on the CDI project's own Go
 * library ({@code src/test/go/cdi-inject}, compiled here from Debian's packaged library, 0.5.2, the
 * generation containerd 1.7 ships) loads the spec directory with its parser and validation and
 * injects the CDI devices Allocate names into an OCI spec. Under {@code CI=true} a missing Go
 * toolchain or library fails the test; elsewhere it is skipped.
 */
class CdiRuntimeIT {

  private static final ObjectMapper JSON = new ObjectMapper();
  private static final Path LIBRARY =
      Path.of(
          "/usr/share/gocode/src/github.com/container-orchestrated-devices/container-device-interface");

  @TempDir static Path build;
  private static Path injector;

  @TempDir Path tmp;
  private TestAgent agent;

  @BeforeAll
  static void buildThePeer() throws Exception {
    boolean available = Files.isDirectory(LIBRARY) && onPath("go");
    if ("true".equals(System.getenv("CI"))) {
      assertThat(available)
          .as("CI=true: the Go toolchain and Debian's CDI library must be installed (.ci/run)")
          .isTrue();
    }
    Assumptions.assumeTrue(
        available,
        "needs go and golang-github-container-orchestrated-devices-container-device-interface-dev");
    injector = build.resolve("cdi-inject");
    ProcessBuilder go =
        new ProcessBuilder(
                "go",
                "build",
                "-o",
                injector.toString(),
                Path.of("src/test/go/cdi-inject/main.go").toAbsolutePath().toString())
            .redirectErrorStream(true);
    go.environment().put("GOPATH", "/usr/share/gocode");
    go.environment().put("GO111MODULE", "off");
    go.environment().put("GOCACHE", build.resolve("gocache").toString());
    go.environment().put("GOFLAGS", "");
    Run run = run(go, Duration.ofMinutes(3));
    assertThat(run.code()).as("go build: %s", run.out()).isZero();
  }

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  private static boolean onPath(String command) {
    String path = System.getenv("PATH");
    if (path == null) {
      return false;
    }
    for (String dir : path.split(":")) {
      if (Files.isExecutable(Path.of(dir, command))) {
        return true;
      }
    }
    return false;
  }

  private record Run(int code, String out, String err) {}

  private static Run run(ProcessBuilder pb, Duration deadline) throws Exception {
    Path out = Files.createTempFile("cdi-peer-out", ".txt");
    Path err = Files.createTempFile("cdi-peer-err", ".txt");
    try {
      pb.redirectOutput(out.toFile());
      if (!pb.redirectErrorStream()) {
        pb.redirectError(err.toFile());
      }
      Process p = pb.start();
      if (!p.waitFor(deadline.toMillis(), TimeUnit.MILLISECONDS)) {
        p.destroyForcibly();
        throw new AssertionError(pb.command() + " did not end within " + deadline);
      }
      return new Run(
          p.exitValue(),
          Files.readString(out, StandardCharsets.UTF_8),
          Files.readString(err, StandardCharsets.UTF_8));
    } finally {
      Files.deleteIfExists(out);
      Files.deleteIfExists(err);
    }
  }

  /** The runtime library's view: the OCI spec after injecting {@code devices} from {@code dir}. */
  private static JsonNode inject(Path dir, List<String> devices) throws Exception {
    List<String> command = new ArrayList<>(List.of(injector.toString(), dir.toString()));
    command.addAll(devices);
    Run run = run(new ProcessBuilder(command), Duration.ofSeconds(30));
    assertThat(run.code()).as("cdi-inject: %s", run.err()).isZero();
    assertThat(run.err()).isEmpty();
    return JSON.readTree(run.out());
  }

  private static List<String> texts(JsonNode array) {
    List<String> out = new ArrayList<>();
    array.forEach(n -> out.add(n.asText()));
    return out;
  }

  @Test
  void theRuntimesCdiLibraryLoadsASpecAndInjectsExactlyTheInstanceContract() throws Exception {
    Map<String, String> properties = new LinkedHashMap<>();
    properties.put("URL", "rtsp://10.0.0.9/live");
    properties.put("NEWLINE", "a\nb");
    properties.put("QUOTES", "\"}]} \\ é 😀");
    properties.put("HUGE", "x".repeat(5000));
    for (int i = 0; i < 300; i++) {
      properties.put(String.format("ZZ%04d", i), "v" + i);
    }
    LocalDevice device =
        new LocalDevice(
            "cam-a1b2c3",
            new ConfigurationSpec(
                "cam", "simulated", "", List.of(), 2, Map.of("MODEL", "m"), Optional.empty()),
            new DiscoveredDevice(
                "dev-0",
                properties,
                List.of(new DiscoveredDevice.Mount("/host-tmp", tmp.toString(), true)),
                List.of(new DiscoveredDevice.DeviceSpec("/dev/cam0", "/dev/null", "rw")),
                Map.of(),
                Optional.empty(),
                true),
            true);
    Path dir = tmp.resolve("cdi");
    CdiSpecs specs = new CdiSpecs(dir);
    specs.start();
    specs.serve("cam-a1b2c3", "cam", 2, InstanceContract.of(device));

    JsonNode result = inject(dir, List.of("akri.sh/cam=cam-a1b2c3-1"));

    assertThat(texts(result.path("devices")))
        .containsExactly("akri.sh/cam=cam-a1b2c3-0", "akri.sh/cam=cam-a1b2c3-1");
    JsonNode oci = result.path("spec");
    List<String> expected = new ArrayList<>();
    new TreeMap<>(InstanceContract.of(device).getEnvsMap())
        .forEach((k, v) -> expected.add(k + "=" + v));
    expected.add("JAKRI_SLOT_A1B2C3_1=cam-a1b2c3-1");
    assertThat(texts(oci.path("process").path("env"))).containsExactlyElementsOf(expected);
    assertThat(oci.path("mounts")).hasSize(1);
    assertThat(oci.path("mounts").get(0).path("destination").asText()).isEqualTo("/host-tmp");
    assertThat(oci.path("mounts").get(0).path("source").asText()).isEqualTo(tmp.toString());
    assertThat(texts(oci.path("mounts").get(0).path("options"))).contains("ro");
    JsonNode node = oci.path("linux").path("devices").get(0);
    assertThat(node.path("path").asText()).isEqualTo("/dev/cam0");
    // The library looked the host's /dev/null up: a character device 1:3.
    assertThat(node.path("type").asText()).isEqualTo("c");
    assertThat(node.path("major").asInt()).isEqualTo(1);
    assertThat(node.path("minor").asInt()).isEqualTo(3);
  }

  @Test
  void theCdiDevicesAllocateNamesAreResolvedByTheRuntimesLibrary() throws Exception {
    Path cdi = tmp.resolve("cdi");
    agent =
        TestAgent.start(
            tmp.resolve("agent"),
            "node-a",
            Duration.ofSeconds(60),
            true,
            o -> o.withCdi(Optional.of(cdi)));
    agent.writeConfig(
        "cams.yaml",
        TestAgent.configuration(
            "cams", "simulated", 2, "count: 2\nidPrefix: cam\nproperties:\n  MODEL: x1"));
    agent.awaitAllocatable("akri.sh/cams", 4);

    ContainerAllocation c =
        agent
            .kubelet()
            .admit(Pod.of("default", "two", Container.of("c", "akri.sh/cams", 2)))
            .container("c");
    assertThat(c.cdiDevices()).hasSize(2);

    JsonNode oci = inject(cdi, c.cdiDevices()).path("spec");

    List<String> env = texts(oci.path("process").path("env"));
    for (String slot : c.deviceIds("akri.sh/cams")) {
      String instance = slot.substring(0, slot.lastIndexOf('-'));
      String hash =
          instance.substring(instance.lastIndexOf('-') + 1).toUpperCase(java.util.Locale.ROOT);
      assertThat(env)
          .contains(
              "JAKRI_SLOT_" + hash + "_" + slot.substring(slot.lastIndexOf('-') + 1) + "=" + slot,
              "MODEL_" + hash + "=x1");
      assertThat(c.cdiDevices()).contains(CdiNames.qualifiedName("cams", slot));
    }
  }

  @Test
  void aSpecOfADottedConfigurationNeedsA06Runtime() throws Exception {
    // What the version rule is for: this library generation (containerd 1.7's) knows CDI up to
    // 0.5.0 and refuses 0.6.0, so a spec is written 0.6.0 only when it must be.
    Path dir = tmp.resolve("cdi");
    CdiSpecs specs = new CdiSpecs(dir);
    specs.start();
    LocalDevice device =
        new LocalDevice(
            "cams.floor1-a1b2c3",
            new ConfigurationSpec(
                "cams.floor1", "simulated", "", List.of(), 1, Map.of(), Optional.empty()),
            DiscoveredDevice.of("dev-0", Map.of("A", "1"), true),
            true);
    specs.serve("cams.floor1-a1b2c3", "cams.floor1", 1, InstanceContract.of(device));

    Run run = run(new ProcessBuilder(injector.toString(), dir.toString()), Duration.ofSeconds(30));

    assertThat(run.code()).isEqualTo(1);
    assertThat(run.err()).contains("akri.sh-cams.floor1-a1b2c3.json").contains("0.6.0");
  }
}
