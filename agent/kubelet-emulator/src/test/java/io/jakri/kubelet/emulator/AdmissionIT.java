package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.FakeDevicePlugin.healthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.options;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.unhealthy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.kubelet.podresources.v1.ContainerResources;
import io.jakri.kubelet.podresources.v1.ListPodResourcesRequest;
import io.jakri.kubelet.podresources.v1.ListPodResourcesResponse;
import io.jakri.kubelet.podresources.v1.PodResources;
import io.jakri.kubelet.podresources.v1.PodResourcesListerGrpc;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class AdmissionIT {
  private static final String CAMERA = "akri.sh/camera";
  private static final String SENSOR = "akri.sh/sensor";
  private static final DevicePluginOptions PLAIN = options(false, false);

  @TempDir Path tmp;
  private EmulatorFixture fx;

  @BeforeEach
  void setUp() throws Exception {
    fx = new EmulatorFixture(tmp);
    fx.start();
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void oneAllocatePerContainerAndResourceWithOneContainerRequestEach() throws Exception {
    FakeDevicePlugin cameras =
        fx.registered("cam.sock", CAMERA, PLAIN, healthy("c1"), healthy("c2"));
    FakeDevicePlugin sensors =
        fx.registered("sen.sock", SENSOR, PLAIN, healthy("s1"), healthy("s2"), healthy("s3"));
    Map<String, Long> firstRequests = new LinkedHashMap<>();
    firstRequests.put(CAMERA, 1L);
    firstRequests.put(SENSOR, 2L);
    firstRequests.put("cpu", 2L);
    Pod pod =
        Pod.of(
            "default",
            "recorder",
            Container.of("first", firstRequests),
            Container.of("second", CAMERA, 1),
            Container.of("plain"));

    PodAdmission admission = fx.emulator.admit(pod);

    assertThat(cameras.allocateRequests).hasSize(2);
    assertThat(cameras.allocateRequests)
        .allSatisfy(r -> assertThat(r.getContainerRequestsCount()).isEqualTo(1));
    assertThat(sensors.allocateRequests).hasSize(1);
    assertThat(sensors.allocateRequests.get(0).getContainerRequests(0).getDevicesIdsCount())
        .isEqualTo(2);
    ContainerAllocation first = admission.container("first");
    ContainerAllocation second = admission.container("second");
    assertThat(first.deviceIds().keySet()).containsExactly(CAMERA, SENSOR);
    assertThat(first.deviceIds(SENSOR)).hasSize(2).doesNotHaveDuplicates();
    assertThat(second.deviceIds(CAMERA))
        .hasSize(1)
        .doesNotContainAnyElementsOf(first.deviceIds(CAMERA));
    // Envs: the first resource that sets a key wins; mounts, device nodes, CDI devices add up.
    assertThat(first.envs()).containsEntry("DEVICES", first.deviceIds(CAMERA).get(0));
    assertThat(first.mounts()).hasSize(3);
    assertThat(first.devices()).hasSize(3);
    assertThat(first.cdiDevices()).hasSize(3);
    assertThat(first.annotations()).containsOnlyKeys("fake/" + CAMERA, "fake/" + SENSOR);
    assertThat(admission.container("plain")).isEqualTo(ContainerAllocation.EMPTY);
    assertThat(admission.containers().keySet()).containsExactly("first", "second", "plain");
    assertThat(fx.emulator.pods()).containsExactly(admission);
  }

  @Test
  void getPreferredAllocationIsCalledOnlyWhenThePluginAsksForIt() throws Exception {
    FakeDevicePlugin preferring =
        fx.registered(
            "cam.sock",
            CAMERA,
            options(false, true),
            healthy("c1"),
            healthy("c2"),
            healthy("c3"),
            unhealthy("c4"));
    FakeDevicePlugin plain = fx.registered("sen.sock", SENSOR, PLAIN, healthy("s1"));
    preferring.preferredAnswer = List.of("c3", "c4", "bogus");

    PodAdmission admission =
        fx.emulator.admit(
            Pod.of("default", "p", Container.of("main", Map.of(CAMERA, 2L, SENSOR, 1L))));

    assertThat(preferring.preferredRequests).hasSize(1);
    assertThat(preferring.preferredRequests.get(0).getContainerRequestsCount()).isEqualTo(1);
    ContainerPreferredAllocationRequest request =
        preferring.preferredRequests.get(0).getContainerRequests(0);
    assertThat(request.getAvailableDeviceIDsList()).containsExactlyInAnyOrder("c1", "c2", "c3");
    assertThat(request.getMustIncludeDeviceIDsList()).isEmpty();
    assertThat(request.getAllocationSize()).isEqualTo(2);
    // The answer is intersected with the available devices, then filled up.
    List<String> cameras = admission.container("main").deviceIds(CAMERA);
    assertThat(cameras).hasSize(2).startsWith("c3").doesNotContain("c4", "bogus");
    assertThat(plain.callsOf("GetPreferredAllocation")).isZero();
  }

  @Test
  void preStartContainerIsCalledOnlyWhenRequiredAndAgainOnContainerRestart() throws Exception {
    FakeDevicePlugin prestarting =
        fx.registered("cam.sock", CAMERA, options(true, false), healthy("c1"));
    FakeDevicePlugin plain = fx.registered("sen.sock", SENSOR, PLAIN, healthy("s1"));

    fx.emulator.admit(Pod.of("default", "p", Container.of("main", Map.of(CAMERA, 1L, SENSOR, 1L))));

    assertThat(prestarting.preStartRequests).hasSize(1);
    assertThat(prestarting.preStartRequests.get(0).getDevicesIdsList()).containsExactly("c1");
    assertThat(prestarting.calls.indexOf("Allocate"))
        .isLessThan(prestarting.calls.indexOf("PreStartContainer"));
    assertThat(plain.callsOf("PreStartContainer")).isZero();

    fx.emulator.restartContainer("default", "p", "main");

    assertThat(prestarting.preStartRequests).hasSize(2);
    assertThat(prestarting.allocateRequests).hasSize(1); // the Allocate answer is cached
  }

  @Test
  void initContainerDevicesAreReusedByTheNextContainerOfTheSamePod() throws Exception {
    FakeDevicePlugin cameras =
        fx.registered("cam.sock", CAMERA, options(false, true), healthy("c1"));
    Pod pod =
        Pod.withInit(
            "default",
            "warmup",
            List.of(Container.of("init", CAMERA, 1)),
            List.of(Container.of("main", CAMERA, 1)));

    PodAdmission admission = fx.emulator.admit(pod);

    assertThat(admission.container("init").deviceIds(CAMERA)).containsExactly("c1");
    assertThat(admission.container("main").deviceIds(CAMERA)).containsExactly("c1");
    assertThat(cameras.allocateRequests).hasSize(2);
    // Reused devices suffice: no preference is asked for the app container.
    assertThat(cameras.preferredRequests).hasSize(1);
    // Other pods cannot have it while this pod runs.
    assertThatThrownBy(
            () -> fx.emulator.admit(Pod.of("default", "other", Container.of("x", CAMERA, 1))))
        .isInstanceOfSatisfying(
            AdmissionException.class,
            e -> assertThat(e.reason()).isEqualTo("Insufficient " + CAMERA));
  }

  @Test
  void insufficientWhenNotEnoughHealthyFreeDevices() throws Exception {
    FakeDevicePlugin cameras =
        fx.registered("cam.sock", CAMERA, PLAIN, healthy("c1"), healthy("c2"), unhealthy("c3"));
    fx.emulator.admit(Pod.of("default", "big", Container.of("main", CAMERA, 2)));

    assertThatThrownBy(
            () -> fx.emulator.admit(Pod.of("default", "late", Container.of("main", CAMERA, 1))))
        .isInstanceOfSatisfying(
            AdmissionException.class,
            e -> {
              assertThat(e.reason()).isEqualTo("Insufficient " + CAMERA);
              assertThat(e.insufficientResource()).contains(CAMERA);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "requested number of devices unavailable for akri.sh/camera. Requested: 1,"
                          + " Available: 0");
            });
    assertThatThrownBy(
            () ->
                fx.emulator.admit(
                    Pod.of("default", "unknown", Container.of("main", "akri.sh/nothing", 1))))
        .isInstanceOfSatisfying(
            AdmissionException.class,
            e -> assertThat(e.reason()).isEqualTo("Insufficient akri.sh/nothing"));
    assertThat(cameras.allocateRequests).hasSize(1);
    assertThat(fx.emulator.pods()).extracting(PodAdmission::name).containsExactly("big");
  }

  @Test
  void allocateErrorRejectsThePodWithUnexpectedAdmissionErrorAndFreesItsDevices() throws Exception {
    FakeDevicePlugin cameras = fx.registered("cam.sock", CAMERA, PLAIN, healthy("c1"));
    FakeDevicePlugin sensors = fx.registered("sen.sock", SENSOR, PLAIN, healthy("s1"));
    sensors.allocateFailure = Optional.of(Status.INTERNAL.withDescription("sensor busy"));
    Pod pod = Pod.of("default", "p", Container.of("a", CAMERA, 1), Container.of("b", SENSOR, 1));

    assertThatThrownBy(() -> fx.emulator.admit(pod))
        .isInstanceOfSatisfying(
            AdmissionException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(AdmissionException.UNEXPECTED_ADMISSION_ERROR);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "Allocate failed due to rpc error: code = Internal desc = sensor busy,"
                          + " which is unexpected");
            });
    assertThat(fx.emulator.pods()).isEmpty();

    sensors.allocateFailure = Optional.empty();
    PodAdmission admission = fx.emulator.admit(pod);
    assertThat(admission.container("a").deviceIds(CAMERA)).containsExactly("c1");
    assertThat(cameras.allocateRequests).hasSize(2);
  }

  @Test
  void podResourcesListReturnsTheAdmittedPodsAndTheirDevices() throws Exception {
    fx.registered("cam.sock", CAMERA, PLAIN, healthy("c1"), healthy("c2"));
    fx.emulator.admit(
        Pod.withInit(
            "media",
            "one",
            List.of(Container.of("init", CAMERA, 1)),
            List.of(Container.of("main", CAMERA, 1), Container.of("sidecar"))));
    fx.emulator.admit(Pod.of("default", "two", Container.of("main", CAMERA, 1)));

    ListPodResourcesResponse list = listPodResources();

    assertThat(list.getPodResourcesList())
        .extracting(PodResources::getNamespace, PodResources::getName)
        .containsExactly(
            org.assertj.core.groups.Tuple.tuple("media", "one"),
            org.assertj.core.groups.Tuple.tuple("default", "two"));
    PodResources one = list.getPodResources(0);
    assertThat(one.getContainersList())
        .extracting(ContainerResources::getName)
        .containsExactly("main", "sidecar");
    assertThat(one.getContainers(0).getDevices(0).getResourceName()).isEqualTo(CAMERA);
    assertThat(one.getContainers(0).getDevices(0).getDeviceIdsList()).containsExactly("c1");
    assertThat(one.getContainers(1).getDevicesList()).isEmpty();
    assertThat(list.getPodResources(1).getContainers(0).getDevices(0).getDeviceIdsList())
        .containsExactly("c2");
  }

  @Test
  void removePodFreesItsDevices() throws Exception {
    fx.registered("cam.sock", CAMERA, PLAIN, healthy("c1"));
    fx.emulator.admit(Pod.of("default", "first", Container.of("main", CAMERA, 1)));
    Pod second = Pod.of("default", "second", Container.of("main", CAMERA, 1));
    assertThatThrownBy(() -> fx.emulator.admit(second)).isInstanceOf(AdmissionException.class);

    fx.emulator.removePod("default", "first");
    fx.emulator.removePod("default", "first"); // no-op

    assertThat(fx.emulator.admit(second).container("main").deviceIds(CAMERA)).containsExactly("c1");
    assertThat(listPodResources().getPodResourcesList())
        .extracting(PodResources::getName)
        .containsExactly("second");
  }

  @Test
  void concurrentAdmissionsNeverHandOutADeviceTwice() throws Exception {
    fx.registered(
        "cam.sock", CAMERA, PLAIN, healthy("c1"), healthy("c2"), healthy("c3"), healthy("c4"));
    ExecutorService pool = Executors.newFixedThreadPool(6);
    List<Future<Optional<PodAdmission>>> results = new ArrayList<>();
    try {
      for (int i = 0; i < 10; i++) {
        Pod pod = Pod.of("default", "p" + i, Container.of("main", CAMERA, 1));
        Callable<Optional<PodAdmission>> admit =
            () -> {
              try {
                return Optional.of(fx.emulator.admit(pod));
              } catch (AdmissionException e) {
                return Optional.empty();
              }
            };
        results.add(pool.submit(admit));
      }
      List<String> handedOut = new ArrayList<>();
      for (Future<Optional<PodAdmission>> f : results) {
        f.get(30, TimeUnit.SECONDS)
            .ifPresent(a -> handedOut.addAll(a.container("main").deviceIds(CAMERA)));
      }
      assertThat(handedOut).hasSize(4);
      assertThat(new HashSet<>(handedOut)).isEqualTo(Set.of("c1", "c2", "c3", "c4"));
      assertThat(fx.emulator.pods()).hasSize(4);
    } finally {
      pool.shutdownNow();
    }
  }

  private ListPodResourcesResponse listPodResources() {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(
                new DomainSocketAddress(fx.emulator.podResourcesSocket().toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(fx.group)
            .usePlaintext()
            .build();
    try {
      return PodResourcesListerGrpc.newBlockingStub(channel)
          .withDeadlineAfter(10, TimeUnit.SECONDS)
          .list(ListPodResourcesRequest.getDefaultInstance());
    } finally {
      channel.shutdownNow();
    }
  }
}
