package io.jakri.agent;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import io.jakri.agent.cdi.CdiNames;
import io.jakri.agent.instance.Instance;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.ContainerAllocation;
import io.jakri.kubelet.emulator.Pod;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * CDI end to end in a standalone agent with the kubelet emulator: a spec per Instance in a temp
 * directory (never the node's /var/run/cdi), following discovery, and Allocate naming the CDI
 * devices of the slots it gives.
 */
class CdiAgentIT {

  private static final ObjectMapper JSON = new ObjectMapper();

  @TempDir Path tmp;
  private TestAgent agent;

  @AfterEach
  void stop() {
    if (agent != null) {
      agent.close();
    }
  }

  private Path cdiDir() {
    return tmp.resolve("cdi");
  }

  private TestAgent start(Duration grace, boolean cdi) throws IOException {
    return TestAgent.start(
        tmp.resolve("agent"),
        "node-a",
        grace,
        true,
        o -> cdi ? o.withCdi(Optional.of(cdiDir())) : o);
  }

  private static String cams(int count, String model) {
    return TestAgent.configuration(
        "cams",
        "simulated",
        2,
        "count: "
            + count
            + "\nidPrefix: cam\ndeviceFilePrefix: video\nproperties:\n  MODEL: "
            + model);
  }

  private List<String> specFiles() throws IOException {
    if (!Files.isDirectory(cdiDir())) {
      return List.of();
    }
    try (Stream<Path> files = Files.list(cdiDir())) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  private List<String> instances() throws Exception {
    return agent.agent.instances().list().stream().map(Instance::name).sorted().toList();
  }

  private JsonNode spec(String instance) throws IOException {
    return JSON.readTree(cdiDir().resolve(CdiNames.specFileName(instance)).toFile());
  }

  private static List<String> env(JsonNode spec) {
    List<String> env = new ArrayList<>();
    spec.path("containerEdits").path("env").forEach(e -> env.add(e.asText()));
    return env;
  }

  @Test
  void everyInstanceGetsASpecAndAllocateNamesTheCdiDevicesOfTheSlotsItGives() throws Exception {
    agent = start(Duration.ofSeconds(60), true);
    agent.writeConfig("cams.yaml", cams(2, "x1"));
    agent.awaitCapacity("akri.sh/cams", 4);
    List<String> instances = instances();
    assertThat(instances).hasSize(2);
    assertThat(specFiles())
        .containsExactlyElementsOf(instances.stream().map(CdiNames::specFileName).toList());
    for (String instance : instances) {
      JsonNode spec = spec(instance);
      assertThat(spec.path("kind").asText()).isEqualTo("akri.sh/cams");
      assertThat(spec.path("devices").findValuesAsText("name"))
          .containsExactly(instance + "-0", instance + "-1");
      assertThat(
              io.jakri.agent.cdi.CdiSchema.problems(
                  Files.readAllBytes(cdiDir().resolve(CdiNames.specFileName(instance)))))
          .isEmpty();
    }

    String first = instances.get(0);
    // The class resource and each Instance resource register on their own: wait for this one too.
    agent.awaitAllocatable("akri.sh/" + first, 2);
    ContainerAllocation one =
        agent
            .kubelet()
            .admit(Pod.of("default", "one", Container.of("c", "akri.sh/" + first, 1)))
            .container("c");
    String slot = one.deviceIds("akri.sh/" + first).get(0);
    assertThat(one.cdiDevices()).containsExactly(CdiNames.qualifiedName("cams", slot));
    // The spec carries what Allocate gave for the Instance resource.
    List<String> given = new ArrayList<>();
    one.envs().forEach((k, v) -> given.add(k + "=" + v));
    assertThat(given).containsAll(env(spec(first)));
    assertThat(env(spec(first))).contains("MODEL=x1");
    assertThat(spec(first).path("containerEdits").path("deviceNodes").findValuesAsText("path"))
        .containsExactlyElementsOf(one.devices().stream().map(d -> d.containerPath()).toList());

    // The slot pod one holds leaves the class resource before a pod asks the class.
    agent.awaitCapacity("akri.sh/cams", 3);
    ContainerAllocation two =
        agent
            .kubelet()
            .admit(Pod.of("default", "two", Container.of("c", "akri.sh/cams", 2)))
            .container("c");
    assertThat(two.cdiDevices())
        .hasSize(2)
        .containsExactlyInAnyOrderElementsOf(
            two.deviceIds("akri.sh/cams").stream()
                .map(s -> CdiNames.qualifiedName("cams", s))
                .toList());
  }

  @Test
  void specsAreRewrittenWhenPropertiesChangeAndGoWithTheirInstances() throws Exception {
    agent = start(Duration.ofMillis(300), true);
    agent.writeConfig("cams.yaml", cams(2, "x1"));
    agent.awaitCapacity("akri.sh/cams", 4);
    List<String> instances = instances();

    agent.writeConfig("cams.yaml", cams(2, "x2"));

    await()
        .atMost(Duration.ofSeconds(20))
        .untilAsserted(
            () -> {
              for (String instance : instances) {
                assertThat(env(spec(instance))).contains("MODEL=x2").doesNotContain("MODEL=x1");
              }
            });

    agent.writeConfig("cams.yaml", cams(1, "x2"));
    agent.awaitCapacity("akri.sh/cams", 2);
    await().atMost(Duration.ofSeconds(20)).until(() -> specFiles().size() == 1);
    assertThat(specFiles()).containsExactly(CdiNames.specFileName(instances().get(0)));

    agent.deleteConfig("cams.yaml");
    await().atMost(Duration.ofSeconds(20)).until(() -> specFiles().isEmpty());
  }

  @Test
  void stoppingRemovesTheSpecsAndStartingRemovesThoseAnEarlierRunLeft() throws Exception {
    Files.createDirectories(cdiDir());
    Files.writeString(cdiDir().resolve("akri.sh-cams-0ld0ld.json"), "{\"cdiVersion\":");
    Files.writeString(cdiDir().resolve("vendor.com-gpu.json"), "{}");
    agent = start(Duration.ofSeconds(60), true);
    assertThat(specFiles()).containsExactly("vendor.com-gpu.json");
    agent.writeConfig("cams.yaml", cams(2, "x1"));
    agent.awaitCapacity("akri.sh/cams", 4);
    assertThat(specFiles()).hasSize(3);

    agent.close();
    agent = null;

    assertThat(specFiles()).containsExactly("vendor.com-gpu.json");
  }

  @Test
  void withoutCdiNothingIsWrittenAndAllocateNamesNoCdiDevice() throws Exception {
    agent = start(Duration.ofSeconds(60), false);
    agent.writeConfig("cams.yaml", cams(1, "x1"));
    agent.awaitCapacity("akri.sh/cams", 2);
    String instance = instances().get(0);
    // The class resource and the Instance resource register on their own: wait for this one too.
    agent.awaitAllocatable("akri.sh/" + instance, 2);

    ContainerAllocation c =
        agent
            .kubelet()
            .admit(Pod.of("default", "one", Container.of("c", "akri.sh/" + instance, 1)))
            .container("c");

    assertThat(c.envs()).containsEntry("MODEL", "x1");
    assertThat(c.cdiDevices()).isEmpty();
    assertThat(agent.agent.cdiSpecs()).isEmpty();
    assertThat(cdiDir()).doesNotExist();
  }
}
