package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.emulator.EmulatorListener;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
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

/** Many resources served at once against the kubelet emulator: starts run concurrently. */
class DevicePluginManagerIT {

  static final int MANY = 300;
  static final Duration DEADLINE = Duration.ofSeconds(60);

  @TempDir Path tmp;
  Path dir;
  EventLoopGroup group;
  ExecutorService grpc;
  ScheduledExecutorService scheduler;
  KubeletEmulator kubelet;
  DevicePluginManager manager;
  final List<String> rejected = new CopyOnWriteArrayList<>();

  @BeforeEach
  @SuppressWarnings("deprecation")
  void setUp() throws Exception {
    dir = tmp.resolve("device-plugins");
    group = new EpollEventLoopGroup(2);
    grpc = Executors.newFixedThreadPool(8);
    scheduler = Executors.newScheduledThreadPool(1);
    kubelet =
        KubeletEmulator.builder(dir)
            .podResourcesSocket(tmp.resolve("pod-resources").resolve("kubelet.sock"))
            .writeCheckpoint(false)
            .build();
    kubelet.addListener(
        new EmulatorListener() {
          @Override
          public void registrationRejected(String resource, String reason) {
            rejected.add(resource + ": " + reason);
          }
        });
    kubelet.start();
    manager = new DevicePluginManager(dir, group, grpc, scheduler, Clock.systemUTC());
    manager.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    manager.close();
    kubelet.close();
    scheduler.shutdownNow();
    grpc.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void everyResourceServedAtOnceIsRegisteredWithItsDevice() throws Exception {
    serveMany();

    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () -> {
              assertThat(kubelet.registeredResources()).hasSize(MANY);
              assertThat(kubelet.allocatable().values()).hasSize(MANY).containsOnly(1L);
            });
    assertThat(rejected).isEmpty();
    assertThat(manager.allRegistered()).isTrue();
    assertThat(resourceSockets()).hasSize(MANY);
  }

  @Test
  void kubeletRestartServesAndRegistersEveryResourceAgainOnFreshSockets() throws Exception {
    serveMany();
    await().atMost(DEADLINE).until(() -> kubelet.allocatable().size() == MANY);
    long before = kubelet.registrations();

    kubelet.restart();

    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () -> {
              assertThat(kubelet.registrations()).isGreaterThanOrEqualTo(before + MANY);
              assertThat(kubelet.allocatable().values()).hasSize(MANY).containsOnly(1L);
            });
    assertThat(rejected).isEmpty();
    assertThat(resourceSockets()).hasSize(MANY);
  }

  @Test
  void resourcesRetiredWhileStartingLeaveNoSocketBehind() {
    serveMany();
    for (int i = 0; i < MANY; i++) {
      manager.retire(resource(i));
    }

    await().atMost(DEADLINE).until(() -> manager.served().isEmpty());
    await().atMost(DEADLINE).untilAsserted(() -> assertThat(resourceSockets()).isEmpty());
  }

  @Test
  void closeRemovesEverySocketEvenWhileStarting() throws Exception {
    serveMany();

    manager.close();

    assertThat(resourceSockets()).isEmpty();
  }

  private void serveMany() {
    for (int i = 0; i < MANY; i++) {
      manager.serve(new OneDevice(resource(i), "bench-" + i));
    }
  }

  private static String resource(int i) {
    return "test.jakri.io/r-" + i;
  }

  private List<Path> resourceSockets() throws Exception {
    try (Stream<Path> files = Files.list(dir)) {
      return files.filter(p -> p.getFileName().toString().startsWith("bench-")).toList();
    }
  }

  /** A resource with one healthy device. */
  record OneDevice(String resourceName, String socketStem) implements ResourceBackend {
    @Override
    public List<Device> devices() {
      return List.of(Device.newBuilder().setID(socketStem + "-0").setHealth("Healthy").build());
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
  }
}
