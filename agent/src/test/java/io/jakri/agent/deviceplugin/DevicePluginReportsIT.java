package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.emulator.Container;
import io.jakri.kubelet.emulator.KubeletEmulator;
import io.jakri.kubelet.emulator.Pod;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The device-plugin manager, built directly with a report sink, against the kubelet emulator: what
 * happens to a resource reaches the sink as {@link DevicePluginReport} values.
 */
class DevicePluginReportsIT {

  static final Duration DEADLINE = Duration.ofSeconds(30);
  static final String RESOURCE = "test.jakri.io/events";

  @TempDir Path tmp;
  EventLoopGroup group;
  ExecutorService grpc;
  ScheduledExecutorService scheduler;
  KubeletEmulator kubelet;
  DevicePluginManager manager;
  final List<DevicePluginReport> events = new CopyOnWriteArrayList<>();

  @BeforeEach
  void setUp() throws Exception {
    Path dir = tmp.resolve("device-plugins");
    group = new EpollEventLoopGroup(2);
    grpc = Executors.newFixedThreadPool(4);
    scheduler = Executors.newScheduledThreadPool(1);
    kubelet =
        KubeletEmulator.builder(dir)
            .podResourcesSocket(tmp.resolve("pod-resources").resolve("kubelet.sock"))
            .writeCheckpoint(false)
            .build();
    kubelet.start();
    manager = new DevicePluginManager(dir, group, grpc, scheduler, Clock.systemUTC(), events::add);
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
  void aServedResourceReportsTheKubeletItsRegistrationAndItsFirstSnapshot() {
    manager.serve(new OneDevice(RESOURCE, "events"));

    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () ->
                assertThat(events)
                    .contains(
                        new DevicePluginReport.KubeletRestarted(1),
                        new DevicePluginReport.Advertised(RESOURCE, true))
                    .anySatisfy(
                        e ->
                            assertThat(e)
                                .isInstanceOfSatisfying(
                                    DevicePluginReport.Registered.class,
                                    r -> {
                                      assertThat(r.resource()).isEqualTo(RESOURCE);
                                      assertThat(r.endpoint()).startsWith("events-");
                                      assertThat(r.again()).isFalse();
                                    })));
  }

  @Test
  void afterAKubeletRestartTheResourceRegistersAgain() throws Exception {
    manager.serve(new OneDevice(RESOURCE, "events"));
    await().atMost(DEADLINE).until(manager::allRegistered);

    kubelet.restart();

    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () ->
                // Not KubeletRestarted(2): the new kubelet.sock may get the old one's inode, and
                // then only our deleted sockets tell of the restart.
                assertThat(events)
                    .anySatisfy(
                        e ->
                            assertThat(e)
                                .isInstanceOfSatisfying(
                                    DevicePluginReport.Registered.class,
                                    r -> assertThat(r.again()).isTrue())));
  }

  @Test
  void anAllocateIsReportedWithItsOutcome() throws Exception {
    manager.serve(new OneDevice(RESOURCE, "events"));
    await().atMost(DEADLINE).until(() -> kubelet.allocatable().getOrDefault(RESOURCE, 0L) == 1L);

    kubelet.admit(Pod.of("default", "p", Container.of("c", RESOURCE, 1)));

    // Reported after the answer was sent: it may reach the sink just after admit returned.
    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () ->
                assertThat(events)
                    .anySatisfy(
                        e ->
                            assertThat(e)
                                .isInstanceOfSatisfying(
                                    DevicePluginReport.Allocated.class,
                                    a -> {
                                      assertThat(a.resource()).isEqualTo(RESOURCE);
                                      assertThat(a.outcome())
                                          .isInstanceOf(AllocateOutcome.Granted.class);
                                    })));
  }

  @Test
  void aRefusedRegistrationIsReportedWithTheKubeletsReason() {
    manager.serve(new OneDevice("no-domain", "invalid"));

    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () ->
                assertThat(events)
                    .anySatisfy(
                        e ->
                            assertThat(e)
                                .isInstanceOfSatisfying(
                                    DevicePluginReport.RegistrationFailed.class,
                                    f -> {
                                      assertThat(f.resource()).isEqualTo("no-domain");
                                      assertThat(f.reason()).contains("is invalid");
                                    })));
  }

  @Test
  void aRetiredResourceIsReportedOnce() {
    manager.serve(new OneDevice(RESOURCE, "events"));
    await().atMost(DEADLINE).until(manager::allRegistered);

    manager.retire(RESOURCE);
    manager.retire(RESOURCE);

    await().atMost(DEADLINE).until(() -> manager.served().isEmpty());
    await()
        .atMost(DEADLINE)
        .untilAsserted(
            () ->
                assertThat(events)
                    .filteredOn(DevicePluginReport.Retired.class::isInstance)
                    .containsExactly(new DevicePluginReport.Retired(RESOURCE)));
  }

  /** A resource with one healthy device. */
  private record OneDevice(String resourceName, String socketStem) implements ResourceBackend {
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
