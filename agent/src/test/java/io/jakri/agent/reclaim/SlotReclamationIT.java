package io.jakri.agent.reclaim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.EmulatedKubelet;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A real agent (debugEcho handler) with its kubelet emulator and a short reclaim grace. */
class SlotReclamationIT {

  private static final String NODE = "node-a";
  private static final Duration GRACE = Duration.ofMillis(300);
  private static final String INSTANCE = "akri-debug-echo-foo-8120fe";
  private static final String INSTANCE_RESOURCE = "akri.sh/" + INSTANCE;
  private static final String CLASS_RESOURCE = "akri.sh/akri-debug-echo-foo";
  private static final String CONFIG =
      """
      apiVersion: akri.sh/v0
      kind: Configuration
      metadata:
        name: akri-debug-echo-foo
      spec:
        capacity: 2
        discoveryHandler:
          name: debugEcho
          discoveryDetails: |
            descriptions: [foo0, foo1]
            shared: true
      """;

  @TempDir Path tmp;
  private Agent agent;

  @BeforeEach
  void startAgent() throws Exception {
    Path config = Files.createDirectories(tmp.resolve("config"));
    agent =
        Agent.start(
            new AgentOptions(
                NODE,
                true,
                Optional.of(config),
                true,
                tmp.resolve("device-plugins"),
                tmp.resolve("pod-resources").resolve("kubelet.sock"),
                Path.of("target", "plugins").toAbsolutePath(),
                Duration.ofSeconds(60),
                GRACE));
    Path staged = config.resolve(".echo.yaml.tmp");
    Files.writeString(staged, CONFIG, StandardCharsets.UTF_8);
    Files.move(staged, config.resolve("echo.yaml"), StandardCopyOption.ATOMIC_MOVE);
    awaitCapacity(INSTANCE_RESOURCE, 2);
    awaitCapacity(CLASS_RESOURCE, 4);
  }

  @AfterEach
  void stopAgent() {
    if (agent != null) {
      agent.close();
    }
  }

  private KubeletEmulator kubelet() {
    return EmulatedKubelet.of(agent).orElseThrow();
  }

  private void awaitCapacity(String resource, long n) {
    await()
        .atMost(Duration.ofSeconds(20))
        .until(() -> kubelet().capacity().getOrDefault(resource, -1L) == n);
  }

  private SlotUsage usage(String slot) throws Exception {
    String instance = slot.substring(0, slot.lastIndexOf('-'));
    return agent
        .instances()
        .get(instance)
        .map(Instance::deviceUsage)
        .map(u -> u.get(slot))
        .orElseThrow();
  }

  /** Admits one pod using an Instance-resource slot and one using a class-resource slot. */
  private String[] admitInstancePodAndClassPod() throws Exception {
    String instanceSlot =
        kubelet()
            .admit(Pod.of("default", "broker", Container.of("c", INSTANCE_RESOURCE, 1)))
            .container("c")
            .deviceIds(INSTANCE_RESOURCE)
            .get(0);
    // The class resource stops offering that slot before the next pod is admitted.
    awaitCapacity(CLASS_RESOURCE, 3);
    String classSlot =
        kubelet()
            .admit(Pod.of("default", "consumer", Container.of("c", CLASS_RESOURCE, 1)))
            .container("c")
            .deviceIds(CLASS_RESOURCE)
            .get(0);
    assertThat(usage(instanceSlot)).isEqualTo(new SlotUsage.NodeUse(NODE));
    assertThat(usage(classSlot)).isEqualTo(new SlotUsage.ClassUse(classSlot, NODE));
    return new String[] {instanceSlot, classSlot};
  }

  @Test
  void slotsOfRemovedPodsAreFreedAndOfferedHealthyAgain() throws Exception {
    String[] slots = admitInstancePodAndClassPod();
    // Held through the class, the slot is Unhealthy on the Instance resource (pushed by
    // ListAndWatch, so not at once).
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> "Unhealthy".equals(kubelet().devices(INSTANCE_RESOURCE).get(slots[1])));

    kubelet().removePod("default", "broker");
    kubelet().removePod("default", "consumer");

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(usage(slots[0])).isEqualTo(SlotUsage.Free.INSTANCE);
              assertThat(usage(slots[1])).isEqualTo(SlotUsage.Free.INSTANCE);
              // Counted just after the write that the store already shows.
              assertThat(agent.reclaimer().reclaimed()).isEqualTo(2);
            });
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () -> {
              assertThat(kubelet().devices(INSTANCE_RESOURCE))
                  .hasSize(2)
                  .allSatisfy((id, health) -> assertThat(health).isEqualTo("Healthy"));
              assertThat(kubelet().devices(CLASS_RESOURCE))
                  .hasSize(4)
                  .containsKeys(slots[0], slots[1])
                  .allSatisfy((id, health) -> assertThat(health).isEqualTo("Healthy"));
            });
  }

  @Test
  void runningPodKeepsItsSlotsWhileARemovedPodsSlotIsFreed() throws Exception {
    String[] slots = admitInstancePodAndClassPod();

    kubelet().removePod("default", "consumer");
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                usage(slots[1]).equals(SlotUsage.Free.INSTANCE)
                    && agent.reclaimer().reclaimed() == 1);

    // Rounds keep running (the freed slot proves the grace has passed); the running pod's slot
    // stays held through several more grace periods.
    await()
        .during(GRACE.multipliedBy(4))
        .atMost(GRACE.multipliedBy(4).plusSeconds(5))
        .until(() -> usage(slots[0]).equals(new SlotUsage.NodeUse(NODE)));
    assertThat(agent.reclaimer().reclaimed()).isEqualTo(1);
  }

  @Test
  void theEmulatorsPodResourcesListShowsWhatPodsHold() throws Exception {
    String[] slots = admitInstancePodAndClassPod();
    @SuppressWarnings("deprecation")
    EventLoopGroup group = new EpollEventLoopGroup(1);
    ExecutorService executor = Executors.newSingleThreadExecutor();
    try (GrpcPodResourcesClient client =
        new GrpcPodResourcesClient(
            kubelet().podResourcesSocket(), group, executor, Duration.ofSeconds(2))) {
      assertThat(client.devicesInUse())
          .containsExactlyInAnyOrder(
              new DeviceInUse(INSTANCE_RESOURCE, slots[0]),
              new DeviceInUse(CLASS_RESOURCE, slots[1]));
    } finally {
      executor.shutdownNow();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }
}
