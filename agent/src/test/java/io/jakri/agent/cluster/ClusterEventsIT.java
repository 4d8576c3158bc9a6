package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.fabric8.kubernetes.api.model.Event;
import io.fabric8.kubernetes.client.KubernetesClient;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.jakri.agent.Agent;
import io.jakri.agent.events.AgentEvents;
import io.jakri.agent.events.ConflictStorms;
import io.jakri.agent.events.RegistrationFailures;
import io.jakri.crd.SlotUsage;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import io.jakri.testing.kube.RealApiServer;
import io.jakri.testing.kube.RealKube;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

/**
 * The operator-facing Warning Events reach the API server (slot conflict storms on the Instance,
 * persistent Register failures and broken plugin jars on the Node), and the slot-conflict metrics
 * count what the agents fought over.
 */
@ExtendWith(RealKube.class)
class ClusterEventsIT {

  KubernetesClient client;
  @TempDir Path tmp;
  ClusterHarness cluster;
  java.util.Set<String> before;

  @BeforeEach
  void setUp(RealApiServer api) {
    cluster = new ClusterHarness(new RealApiPeer(api, "cluster-events"), tmp);
    client = cluster.admin;
    before =
        client.v1().events().inAnyNamespace().list().getItems().stream()
            .map(e -> e.getMetadata().getUid())
            .collect(java.util.stream.Collectors.toSet());
  }

  @AfterEach
  void tearDown() {
    cluster.close();
  }

  @Test
  void slotConflictsAreCountedAndAStormWarnsOnTheInstance() throws Exception {
    cluster.start("n1", Duration.ofSeconds(60));
    cluster.start("n2", Duration.ofSeconds(60));
    cluster.apply(
        ClusterHarness.configuration(
            "shared",
            "static",
            2,
            "deviceMapping:\n  - hosts: [n1, n2]\n    devices:\n"
                + "      - resourceName: example.com/scope\n        instanceID: \"7\"\n"));
    cluster.awaitOneInstanceOnNodes(2);
    io.jakri.crd.Instance stored = cluster.instances().get(0);
    String instance = stored.getMetadata().getName();
    String resource = "akri.sh/" + instance;
    cluster.awaitAllocatable("n1", resource, 2);
    cluster.awaitAllocatable("n2", resource, 2);
    DevicePluginGrpc.DevicePluginBlockingStub n1 = cluster.devicePlugin("n1", resource);
    DevicePluginGrpc.DevicePluginBlockingStub n2 = cluster.devicePlugin("n2", resource);

    // Both nodes claim a different slot of the same Instance at the same moment: one of the two
    // writes loses to the other (HTTP 409) and is retried. Repeat until that happened.
    ExecutorService callers = Executors.newFixedThreadPool(2);
    try {
      await()
          .atMost(Duration.ofSeconds(60))
          .until(
              () -> {
                cluster.freeAllSlots(instance);
                CountDownLatch go = new CountDownLatch(1);
                Future<?> a = callers.submit(() -> allocateAfter(go, n1, instance + "-0"));
                Future<?> b = callers.submit(() -> allocateAfter(go, n2, instance + "-1"));
                go.countDown();
                a.get(30, TimeUnit.SECONDS);
                b.get(30, TimeUnit.SECONDS);
                return slotConflicts("n1", "write_conflict") + slotConflicts("n2", "write_conflict")
                    > 0;
              });
    } finally {
      callers.shutdownNow();
    }

    // n1 holds slot 0; n2's kubelet keeps trying to take it: each claim is refused and counted,
    // and the threshold-th within the window raises one Warning on the Instance.
    cluster.freeAllSlots(instance);
    n1.withDeadlineAfter(10, TimeUnit.SECONDS)
        .allocate(ClusterHarness.allocateRequest(instance + "-0"));
    await()
        .atMost(Duration.ofSeconds(10))
        .until(
            () ->
                cluster
                    .agent("n2")
                    .instances()
                    .get(instance)
                    .map(i -> i.deviceUsage().get(instance + "-0"))
                    .filter(u -> u instanceof SlotUsage.NodeUse n && n.node().equals("n1"))
                    .isPresent());
    double refusedBefore = slotConflicts("n2", "held_elsewhere");
    for (int i = 0; i < ConflictStorms.DEFAULT_THRESHOLD; i++) {
      assertThatThrownBy(
              () ->
                  n2.withDeadlineAfter(10, TimeUnit.SECONDS)
                      .allocate(ClusterHarness.allocateRequest(instance + "-0")))
          .isInstanceOf(StatusRuntimeException.class)
          .hasMessageContaining("held on node n1");
    }
    assertThat(slotConflicts("n2", "held_elsewhere") - refusedBefore)
        .isEqualTo(ConflictStorms.DEFAULT_THRESHOLD);
    assertThat(allocations("n2", "HELD_ELSEWHERE")).isGreaterThanOrEqualTo(10);

    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(events(AgentEvents.SLOT_CONFLICT_STORM))
                    .filteredOn(e -> e.getSource().getHost().equals("n2"))
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertThat(e.getType()).isEqualTo("Warning");
                          assertThat(e.getInvolvedObject().getKind()).isEqualTo("Instance");
                          assertThat(e.getInvolvedObject().getName()).isEqualTo(instance);
                          assertThat(e.getInvolvedObject().getUid())
                              .isEqualTo(stored.getMetadata().getUid());
                          assertThat(e.getMetadata().getNamespace()).isEqualTo(cluster.ns);
                          assertThat(e.getMessage()).contains("node n2", "slot conflicts");
                        }));
  }

  @Test
  void aKubeletRefusingRegisterAndABrokenPluginJarWarnOnTheNode() throws Exception {
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    Files.copy(
        ClusterHarness.PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    Files.writeString(plugins.resolve("not-a-zip.jar"), "garbage bytes");
    Path dir = Files.createDirectories(cluster.devicePluginDir("n3"));
    EventLoopGroup loop = new EpollEventLoopGroup(1);
    Server kubelet =
        NettyServerBuilder.forAddress(
                new DomainSocketAddress(dir.resolve("kubelet.sock").toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(loop)
            .workerEventLoopGroup(loop)
            .addService(
                new RegistrationGrpc.RegistrationImplBase() {
                  @Override
                  public void register(RegisterRequest request, StreamObserver<Empty> out) {
                    out.onError(
                        Status.UNAVAILABLE
                            .withDescription("refusing every registration on purpose")
                            .asRuntimeException());
                  }
                })
            .build()
            .start();
    try {
      Agent agent =
          cluster.start("n3", Duration.ofSeconds(60), Duration.ofSeconds(20), plugins, false);
      cluster.apply(ClusterHarness.configuration("sim", "simulated", 1, "count: 1\n"));

      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                assertThat(events(AgentEvents.PLUGIN_LOAD_FAILED))
                    .singleElement()
                    .satisfies(
                        e -> {
                          assertNodeEvent(e, "n3");
                          assertThat(e.getMessage()).contains("not-a-zip.jar");
                        });
                assertThat(events(AgentEvents.REGISTRATION_FAILED))
                    .isNotEmpty()
                    .allSatisfy(
                        e -> {
                          assertNodeEvent(e, "n3");
                          assertThat(e.getMessage())
                              .contains(
                                  "akri.sh/sim",
                                  RegistrationFailures.DEFAULT_THRESHOLD + " times in a row",
                                  "refusing every registration on purpose");
                        });
              });
      // One Event per failing resource and streak, not one per retry.
      assertThat(counter(agent, "jakri_registration_failures_total"))
          .isGreaterThan(events(AgentEvents.REGISTRATION_FAILED).size());
      assertThat(events(AgentEvents.REGISTRATION_FAILED))
          .extracting(Event::getCount)
          .containsOnly(1);
    } finally {
      cluster.stop("n3");
      kubelet.shutdownNow();
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static void assertNodeEvent(Event e, String node) {
    assertThat(e.getType()).isEqualTo("Warning");
    assertThat(e.getInvolvedObject().getKind()).isEqualTo("Node");
    assertThat(e.getInvolvedObject().getName()).isEqualTo(node);
    // The kubelet's convention (uid = node name), so kubectl describe node lists it.
    assertThat(e.getInvolvedObject().getUid()).isEqualTo(node);
    assertThat(e.getMetadata().getNamespace()).isEqualTo("default");
    assertThat(e.getSource().getHost()).isEqualTo(node);
  }

  private static Void allocateAfter(
      CountDownLatch go, DevicePluginGrpc.DevicePluginBlockingStub stub, String slot)
      throws InterruptedException {
    go.await();
    stub.withDeadlineAfter(30, TimeUnit.SECONDS).allocate(ClusterHarness.allocateRequest(slot));
    return null;
  }

  /**
   * Events with {@code reason} this test's agents wrote: in the harness's namespace, or (Node
   * Events) in "default" but newer than the test, since the API server is shared with other test
   * classes whose agents had the same node names.
   */
  private List<Event> events(String reason) {
    return client.v1().events().inAnyNamespace().list().getItems().stream()
        .filter(e -> !before.contains(e.getMetadata().getUid()))
        .filter(e -> reason.equals(e.getReason()))
        .toList();
  }

  private double slotConflicts(String node, String kind) {
    return sum(cluster.agent(node), "jakri_slot_conflicts_total", "kind=\"" + kind + "\"");
  }

  private double allocations(String node, String reason) {
    return sum(cluster.agent(node), "jakri_allocate_seconds_count", "reason=\"" + reason + "\"");
  }

  private static double counter(Agent agent, String name) {
    return sum(agent, name, "");
  }

  private static double sum(Agent agent, String name, String label) {
    return agent
        .metrics()
        .scrape()
        .lines()
        .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
        .filter(l -> l.contains(label))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }
}
