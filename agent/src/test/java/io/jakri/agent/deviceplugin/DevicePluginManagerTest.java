package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device-plugin manager built directly, with no kubelet at all: what it serves on its own
 * sockets (in a temp dir, no network), what it retires, and what it does not start.
 */
class DevicePluginManagerTest {

  static final Duration DEADLINE = Duration.ofSeconds(20);

  @TempDir Path tmp;
  Path dir;
  EventLoopGroup group;
  ExecutorService grpc;
  ScheduledExecutorService timer;
  final List<DevicePluginReport> events = new CopyOnWriteArrayList<>();

  @BeforeEach
  @SuppressWarnings("deprecation")
  void setUp() throws Exception {
    dir = Files.createDirectories(tmp.resolve("device-plugins"));
    group = new EpollEventLoopGroup(1);
    grpc = Executors.newFixedThreadPool(2);
    timer = Executors.newScheduledThreadPool(1);
  }

  @AfterEach
  void tearDown() throws Exception {
    timer.shutdownNow();
    grpc.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  private static ResourceBackend backend(String resource, String stem) {
    return new ResourceBackend() {
      @Override
      public String resourceName() {
        return resource;
      }

      @Override
      public String socketStem() {
        return stem;
      }

      @Override
      public List<Device> devices() {
        return List.of(Device.newBuilder().setID(stem + "-0").setHealth("Healthy").build());
      }

      @Override
      public List<String> preferredAllocation(
          List<String> available, List<String> mustInclude, int size) {
        return available.subList(0, Math.min(size, available.size()));
      }

      @Override
      public ContainerAllocateResponse allocate(List<String> deviceIds) {
        return ContainerAllocateResponse.getDefaultInstance();
      }
    };
  }

  private List<String> sockets() throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.map(p -> p.getFileName().toString()).sorted().toList();
    }
  }

  @Test
  void withoutAKubeletResourcesAreServedOnTheirSocketsAndRetiredOrClosedWithoutATrace()
      throws Exception {
    DevicePluginManager manager =
        new DevicePluginManager(dir, group, grpc, timer, Clock.systemUTC(), events::add);
    try {
      manager.start();
      manager.serve(backend("test.jakri.io/a", "a"));
      manager.serve(backend("test.jakri.io/b", "b"));
      manager.serve(backend("test.jakri.io/a", "a")); // already served: no second server

      await()
          .atMost(DEADLINE)
          .until(
              () ->
                  manager.socketOf("test.jakri.io/a").isPresent()
                      && manager.socketOf("test.jakri.io/b").isPresent());
      assertThat(manager.served()).containsExactlyInAnyOrder("test.jakri.io/a", "test.jakri.io/b");
      assertThat(sockets()).hasSize(2).allMatch(n -> n.matches("[ab]-[0-9]+\\.sock"));
      assertThat(manager.kubeletReachable()).isFalse();
      assertThat(manager.allRegistered()).isFalse();

      manager.retire("test.jakri.io/a");
      await().atMost(DEADLINE).until(() -> sockets().size() == 1);
      assertThat(sockets().get(0)).startsWith("b-");
      assertThat(manager.served()).containsExactly("test.jakri.io/b");
      await()
          .atMost(DEADLINE)
          .until(() -> events.contains(new DevicePluginReport.Retired("test.jakri.io/a")));
    } finally {
      manager.close();
    }
    assertThat(sockets()).isEmpty();
    assertThat(events).noneMatch(DevicePluginReport.Registered.class::isInstance);
  }

  @Test
  void withNoOpenFilesToSpareNothingStartsAndTheWaitingAreCounted() throws Exception {
    DevicePluginManager.OpenFiles full =
        new DevicePluginManager.OpenFiles() {
          @Override
          public OptionalLong open() {
            return OptionalLong.of(1_000);
          }

          @Override
          public OptionalLong limit() {
            return OptionalLong.of(1_000);
          }
        };
    try (DevicePluginManager manager =
        new DevicePluginManager(dir, group, grpc, timer, Clock.systemUTC(), events::add, full)) {
      manager.start();
      manager.serve(backend("test.jakri.io/a", "a"));
      manager.serve(backend("test.jakri.io/b", "b"));
      awaitOpenFilesLow(2);
      assertThat(sockets()).isEmpty();
      assertThat(manager.socketOf("test.jakri.io/a")).isEmpty();
      assertThat(events).noneMatch(DevicePluginReport.RegistrationFailed.class::isInstance);

      // Once nothing waits (both retired while waiting), the episode ends: 0 waiting.
      manager.retire("test.jakri.io/a");
      manager.retire("test.jakri.io/b");
      awaitOpenFilesLow(0);
    }
  }

  /** Waits for an {@link DevicePluginReport.OpenFilesLow} saying {@code waiting} resources wait. */
  private void awaitOpenFilesLow(int waiting) {
    await()
        .atMost(DEADLINE)
        .until(
            () ->
                events.stream()
                    .anyMatch(
                        e ->
                            e instanceof DevicePluginReport.OpenFilesLow low
                                && low.waiting() == waiting));
  }
}
