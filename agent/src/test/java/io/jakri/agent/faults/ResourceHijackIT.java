package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.agent.TestAgent;
import io.jakri.agent.deviceplugin.DevicePluginManager;
import io.jakri.agent.deviceplugin.ResourceBackend;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Hostile Configurations cannot take over a resource they do not own: a class outside the allowed
 * domains (a GPU vendor's), another Configuration's {@code akri.sh/<name>}, a class another
 * Configuration serves, a resource another device plugin registered with the kubelet. Each is
 * refused with an INVALID status naming the rule and a metric, and the owner keeps its resource.
 */
class ResourceHijackIT {

  private static final Duration WAIT = Duration.ofSeconds(20);

  @TempDir Path tmp;

  @Test
  void aClassOutsideTheAllowedDomainsIsNeverRegistered() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig(
          "thief",
          TestAgent.configuration(
              "thief", "simulated", 1, "count: 2\nresourceName: nvidia.com/gpu"));
      a.writeConfig("fine", TestAgent.configuration("fine", "simulated", 1, "count: 1"));
      a.awaitAllocatable("akri.sh/fine", 1, WAIT);
      a.awaitRefused("thief", "nvidia.com/gpu is not in a domain this agent allows", WAIT);
      assertThat(a.kubelet().registeredResources()).doesNotContain("nvidia.com/gpu");
      assertThat(a.instancesOf("thief")).isZero();
      assertThat(a.agent.metrics().scrape()).contains("jakri_refusals_total{reason=\"CLASS\"} 1.0");
    }
  }

  @Test
  void anotherConfigurationsOwnClassIsRefused() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60))) {
      a.writeConfig("owner", TestAgent.configuration("owner", "simulated", 1, "count: 1"));
      a.awaitAllocatable("akri.sh/owner", 1, WAIT);
      a.writeConfig(
          "intruder",
          TestAgent.configuration(
              "intruder", "simulated", 1, "count: 3\nresourceName: akri.sh/owner"));
      a.awaitRefused("intruder", "may only join akri.sh/intruder", WAIT);
      assertThat(a.allocatable("akri.sh/owner")).isEqualTo(1);
    }
  }

  @Test
  void aClassServedByAnotherConfigurationIsRefusedUntilThatOneGoes() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(1))) {
      a.writeConfig(
          "first",
          TestAgent.configuration(
              "first", "simulated", 1, "count: 1\nresourceName: example.com/widget"));
      a.awaitAllocatable("example.com/widget", 1, WAIT);
      a.writeConfig(
          "second",
          TestAgent.configuration(
              "second",
              "simulated",
              1,
              "count: 2\nidPrefix: other\nresourceName: example.com/widget"));
      a.awaitRefused("second", "example.com/widget is served by Configuration first", WAIT);
      assertThat(a.allocatable("example.com/widget")).isEqualTo(1);

      a.deleteConfig("first");
      a.awaitAllocatable("example.com/widget", 2, WAIT);
      a.awaitDiscovering("second", WAIT);
    }
  }

  @Test
  void aResourceAnotherDevicePluginRegisteredIsRefused() throws Exception {
    Path plugins = FaultAgent.pluginsWith(tmp.resolve("plugins"), "jakri-handler-simulated.jar");
    try (FaultAgent a = FaultAgent.start(tmp.resolve("agent"), plugins, Duration.ofSeconds(60));
        ForeignPlugin gpu = new ForeignPlugin(a.devicePluginDir, "example.com/gpu")) {
      a.awaitAllocatable("example.com/gpu", 1, WAIT);
      // The kubelet records it in its checkpoint, which the agent reads.
      await()
          .atMost(WAIT)
          .until(
              () ->
                  java.nio.file.Files.exists(
                          a.devicePluginDir.resolve("kubelet_internal_checkpoint"))
                      && java.nio.file.Files.readString(
                              a.devicePluginDir.resolve("kubelet_internal_checkpoint"))
                          .contains("example.com/gpu"));
      a.writeConfig(
          "takeover",
          TestAgent.configuration(
              "takeover", "simulated", 1, "count: 4\nresourceName: example.com/gpu"));
      a.awaitRefused("takeover", "registered with the kubelet by another device plugin", WAIT);
      assertThat(a.allocatable("example.com/gpu")).isEqualTo(1);
      assertThat(a.kubelet().devices("example.com/gpu")).containsOnlyKeys("GPU-0");
    }
  }

  /** Another vendor's device plugin: one device, registered with the same kubelet. */
  private static final class ForeignPlugin implements AutoCloseable {
    private final EventLoopGroup group = new EpollEventLoopGroup(1);
    private final ExecutorService grpc = Executors.newFixedThreadPool(2);
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor();
    private final DevicePluginManager manager;

    @SuppressWarnings("deprecation")
    ForeignPlugin(Path dir, String resource) {
      manager = new DevicePluginManager(dir, group, grpc, timer, Clock.systemUTC());
      manager.start();
      manager.serve(
          new ResourceBackend() {
            @Override
            public String resourceName() {
              return resource;
            }

            @Override
            public String socketStem() {
              return "vendor-gpu";
            }

            @Override
            public List<Device> devices() {
              return List.of(Device.newBuilder().setID("GPU-0").setHealth("Healthy").build());
            }

            @Override
            public List<String> preferredAllocation(
                List<String> available, List<String> mustInclude, int size) {
              return available.subList(0, size);
            }

            @Override
            public ContainerAllocateResponse allocate(List<String> deviceIds) {
              return ContainerAllocateResponse.getDefaultInstance();
            }
          });
    }

    @Override
    public void close() throws Exception {
      manager.close();
      grpc.shutdownNow();
      timer.shutdownNow();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
    }
  }
}
