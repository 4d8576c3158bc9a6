package io.jakri.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.agent.Agent;
import io.jakri.agent.AgentOptions;
import io.jakri.agent.PluginJars;
import io.jakri.agent.TestAgent;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.testplugins.MisbehavingHandlers;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class MetricsIT {

  static final Path PLUGINS = Path.of("target", "plugins").toAbsolutePath();

  @TempDir Path tmp;
  final HttpClient http = HttpClient.newHttpClient();

  private Agent start(boolean emulate) throws Exception {
    return start(emulate, PLUGINS);
  }

  private Agent start(boolean emulate, Path plugins) throws Exception {
    Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        tmp.resolve("config").resolve("sim.yaml"),
        TestAgent.configuration("sim", "simulated", 1, "count: 3\nidPrefix: dev\n"));
    return Agent.start(
        new AgentOptions(
                "n1",
                true,
                Optional.of(tmp.resolve("config")),
                emulate,
                tmp.resolve("device-plugins"),
                tmp.resolve("pod-resources").resolve("kubelet.sock"),
                plugins,
                Duration.ofSeconds(30))
            .withMetricsPort(0));
  }

  private HttpResponse<String> get(Agent agent, String path) throws Exception {
    return http.send(
        HttpRequest.newBuilder(
                URI.create("http://127.0.0.1:" + agent.healthPort().orElseThrow() + path))
            .build(),
        HttpResponse.BodyHandlers.ofString());
  }

  @Test
  void metricsDescribeInstancesRegistrationsAndTheJvm() throws Exception {
    try (Agent agent = start(true)) {
      await()
          .atMost(Duration.ofSeconds(20))
          .untilAsserted(
              () -> {
                String body = get(agent, "/metrics").body();
                assertThat(body)
                    .contains("jakri_instances{configuration=\"sim\",node=\"n1\"} 3.0")
                    .contains("jakri_resources_served 4.0")
                    .contains("jakri_configurations{state=\"DISCOVERING\"} 1.0")
                    .contains("jakri_plugin_load_failures 0.0")
                    .contains("jakri_reclaimed_slots_total 0.0")
                    .contains("jvm_threads_live_threads");
                assertThat(counter(body, "jakri_registrations_total")).isGreaterThanOrEqualTo(4);
              });
      assertThat(get(agent, "/healthz").statusCode()).isEqualTo(200);
      assertThat(get(agent, "/readyz").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void akrisMetricNamesAreServedBesideJakris() throws Exception {
    // Akri's agent metrics, with Akri's names and labels (agent/src/util/metrics.rs of Akri).
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    Files.copy(
        PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    PluginJars.build(
        plugins.resolve("misbehaving.jar"),
        "misbehaving",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Throwing.class),
        true);
    Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        tmp.resolve("config").resolve("thrower.yaml"),
        TestAgent.configuration("thrower", "thrower", 1, ""));
    try (Agent agent = start(true, plugins)) {
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                String body = get(agent, "/metrics").body();
                // Instances visible to this node, by Configuration and shared-ness.
                assertThat(body)
                    .contains("# TYPE akri_instance_count gauge")
                    .contains("akri_instance_count{configuration=\"sim\",is_shared=\"false\"} 3.0");
                // Discovery starts by handler: the simulated handler started, the thrower failed.
                assertThat(body).contains("# TYPE akri_discovery_response_result gauge");
                assertThat(
                        counter(
                            body,
                            "akri_discovery_response_result",
                            "discovery_handler_name=\"simulated\"",
                            "result=\"Success\""))
                    .isEqualTo(1);
                assertThat(
                        counter(
                            body,
                            "akri_discovery_response_result",
                            "discovery_handler_name=\"thrower\"",
                            "result=\"Fail\""))
                    .isGreaterThanOrEqualTo(1);
                // Time to the first discovery results, a histogram in seconds with Akri's
                // buckets.
                assertThat(
                        counter(
                            body, "akri_discovery_response_time_count", "configuration=\"sim\""))
                    .isEqualTo(1);
                assertThat(body)
                    .contains("# TYPE akri_discovery_response_time histogram")
                    .contains(
                        "akri_discovery_response_time_bucket{configuration=\"sim\",le=\"0.25\"}")
                    .contains(
                        "akri_discovery_response_time_bucket{configuration=\"sim\",le=\"60.0\"} 1")
                    .contains("jakri_instances{configuration=\"sim\",node=\"n1\"} 3.0");
              });
    }
  }

  @Test
  void standaloneInstancesAreListedAsKubectlWouldWithSlotsAndProperties() throws Exception {
    try (Agent agent = start(true)) {
      await().atMost(Duration.ofSeconds(20)).until(() -> agent.instances().list().size() == 3);
      HttpResponse<String> listing = get(agent, "/instances");
      assertThat(listing.statusCode()).isEqualTo(200);
      assertThat(listing.headers().firstValue("Content-Type"))
          .hasValueSatisfying(type -> assertThat(type).startsWith("application/yaml"));
      Map<String, Object> list = new org.yaml.snakeyaml.Yaml().load(listing.body());
      assertThat(list).containsEntry("kind", "List");
      @SuppressWarnings("unchecked")
      List<Map<String, Object>> items = (List<Map<String, Object>>) list.get("items");
      assertThat(items).hasSize(3);
      for (io.jakri.agent.instance.Instance instance : agent.instances().list()) {
        assertThat(items)
            .anySatisfy(
                item -> {
                  assertThat(item).containsEntry("kind", "Instance");
                  assertThat(item.get("metadata")).isEqualTo(Map.of("name", instance.name()));
                  @SuppressWarnings("unchecked")
                  Map<String, Object> spec = (Map<String, Object>) item.get("spec");
                  assertThat(spec)
                      .containsEntry("configurationName", "sim")
                      .containsEntry("capacity", 1)
                      .containsEntry("nodes", List.of("n1"))
                      .containsEntry("deviceUsage", Map.of(instance.name() + "-0", ""));
                });
      }
    }
  }

  @Test
  void notReadyWhileTheKubeletIsUnreachableButHealthy() throws Exception {
    try (Agent agent = start(false)) {
      HttpResponse<String> ready = get(agent, "/readyz");
      assertThat(ready.statusCode()).isEqualTo(503);
      assertThat(ready.body()).contains("kubelet socket not found");
      assertThat(get(agent, "/healthz").statusCode()).isEqualTo(200);
    }
  }

  @Test
  void allocateDiscoveryAndSlotConflictMetricsMoveWhenTheyHappen() throws Exception {
    Path plugins = Files.createDirectories(tmp.resolve("plugins"));
    Files.copy(
        PLUGINS.resolve("jakri-handler-simulated.jar"),
        plugins.resolve("jakri-handler-simulated.jar"));
    PluginJars.build(
        plugins.resolve("misbehaving.jar"),
        "misbehaving",
        ">=0.1.0",
        List.of(MisbehavingHandlers.Throwing.class),
        true);
    Files.createDirectories(tmp.resolve("config"));
    Files.writeString(
        tmp.resolve("config").resolve("thrower.yaml"),
        TestAgent.configuration("thrower", "thrower", 1, ""));
    EventLoopGroup loop = new EpollEventLoopGroup(1);
    List<ManagedChannel> channels = new ArrayList<>();
    try (Agent agent = start(true, plugins)) {
      // Discovery: the simulated handler's three devices appeared and were advertised; the
      // throwing handler's failures are counted under its name.
      await()
          .atMost(Duration.ofSeconds(30))
          .untilAsserted(
              () -> {
                String body = get(agent, "/metrics").body();
                assertThat(
                        counter(body, "jakri_discovery_snapshots_total", "handler=\"simulated\""))
                    .isGreaterThanOrEqualTo(1);
                assertThat(
                        counter(
                            body,
                            "jakri_discovery_device_changes_total",
                            "change=\"APPEARED\"",
                            "handler=\"simulated\""))
                    .isEqualTo(3);
                // Each of the 3 Instance resources and the class resource got its first snapshot.
                assertThat(counter(body, "jakri_discovery_to_advertised_seconds_count"))
                    .isGreaterThanOrEqualTo(4);
                assertThat(
                        counter(
                            body,
                            "jakri_discovery_errors_total",
                            "error=\"START_FAILED\"",
                            "handler=\"thrower\""))
                    .isGreaterThanOrEqualTo(1);
              });
      String body = get(agent, "/metrics").body();
      assertThat(body)
          .contains("jakri_discovery_to_advertised_seconds_bucket{le=\"0.005\"}")
          .contains("jakri_allocate_seconds_count{outcome=\"refused\",reason=\"HELD_ELSEWHERE\"}");
      assertThat(body).doesNotContain("akri.sh/sim-"); // no per-resource tags

      // Allocate: one granted through the class resource, one refused because that slot is now
      // held through the class (slot conflict), one refused for a device that does not exist.
      Instance instance = agent.instances().list().get(0);
      String slot = instance.deviceUsage().keySet().iterator().next();
      DevicePluginGrpc.DevicePluginBlockingStub byClass =
          dial(agent, "akri.sh/sim", loop, channels);
      DevicePluginGrpc.DevicePluginBlockingStub byInstance =
          dial(agent, "akri.sh/" + instance.name(), loop, channels);
      byClass.allocate(request(slot));
      assertThatThrownBy(() -> byInstance.allocate(request(slot)))
          .isInstanceOf(StatusRuntimeException.class)
          .hasMessageContaining("in use");
      assertThatThrownBy(() -> byClass.allocate(request("no-such-device")))
          .isInstanceOf(StatusRuntimeException.class);

      String after = get(agent, "/metrics").body();
      assertThat(counter(after, "jakri_allocate_seconds_count", "outcome=\"granted\""))
          .isEqualTo(1);
      assertThat(
              counter(
                  after,
                  "jakri_allocate_seconds_count",
                  "outcome=\"refused\"",
                  "reason=\"HELD_ELSEWHERE\""))
          .isEqualTo(1);
      assertThat(
              counter(
                  after,
                  "jakri_allocate_seconds_count",
                  "outcome=\"refused\"",
                  "reason=\"UNKNOWN_DEVICE\""))
          .isEqualTo(1);
      assertThat(counter(after, "jakri_allocate_seconds_sum", "outcome=\"granted\""))
          .isGreaterThan(0);
      assertThat(counter(after, "jakri_slot_conflicts_total", "kind=\"held_elsewhere\""))
          .isEqualTo(1);
      assertThat(counter(after, "jakri_slot_conflicts_total", "kind=\"write_conflict\"")).isZero();
    } finally {
      channels.forEach(ManagedChannel::shutdownNow);
      loop.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }

  private static DevicePluginGrpc.DevicePluginBlockingStub dial(
      Agent agent, String resource, EventLoopGroup loop, List<ManagedChannel> channels) {
    Path socket = agent.devicePlugins().socketOf(resource).orElseThrow();
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(loop)
            .usePlaintext()
            .build();
    channels.add(channel);
    return DevicePluginGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  private static AllocateRequest request(String... ids) {
    return AllocateRequest.newBuilder()
        .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(List.of(ids)))
        .build();
  }

  /** The sum of a metric's samples whose labels contain every one of {@code labels}. */
  static double counter(String body, String name, String... labels) {
    return body.lines()
        .filter(l -> l.startsWith(name + " ") || l.startsWith(name + "{"))
        .filter(l -> java.util.Arrays.stream(labels).allMatch(l::contains))
        .mapToDouble(l -> Double.parseDouble(l.substring(l.lastIndexOf(' ') + 1)))
        .sum();
  }
}
