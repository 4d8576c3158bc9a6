package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.FakeDevicePlugin.healthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.options;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.unhealthy;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class RegistrationIT {
  private static final String RESOURCE = "akri.sh/udev-video";
  private static final DevicePluginOptions PLAIN = options(false, false);

  @TempDir Path tmp;
  private EmulatorFixture fx;

  @BeforeEach
  void setUp() {
    fx = new EmulatorFixture(tmp);
  }

  @AfterEach
  void tearDown() throws Exception {
    fx.close();
  }

  @Test
  void validRegistrationExposesCapacityAndAllocatable() throws Exception {
    fx.start();
    fx.registered("video.sock", RESOURCE, PLAIN, healthy("a"), healthy("b"), unhealthy("c"));

    assertThat(fx.emulator.capacity()).containsExactly(Map.entry(RESOURCE, 3L));
    assertThat(fx.emulator.allocatable()).containsExactly(Map.entry(RESOURCE, 2L));
    assertThat(fx.emulator.devices(RESOURCE))
        .containsExactly(
            Map.entry("a", "Healthy"), Map.entry("b", "Healthy"), Map.entry("c", "Unhealthy"));
    assertThat(fx.emulator.registeredResources()).containsExactly(RESOURCE);
    assertThat(fx.emulator.registrations()).isEqualTo(1);
    assertThat(fx.emulator.devices("akri.sh/unknown")).isEmpty();
    // Listener events are delivered after the state they describe is visible: awaited.
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(
            () ->
                assertThat(fx.events.of("registered"))
                    .containsExactly("registered " + RESOURCE + " video.sock"));
  }

  @Test
  void aSlowKubeletAnswersRegisterNoEarlierThanItsDelayAndStillDialsThePluginFirst()
      throws Exception {
    fx.start(b -> b.registerDelay(Duration.ofMillis(300)));
    FakeDevicePlugin plugin = fx.plugin("video.sock", RESOURCE, PLAIN, healthy("a"));

    long sent = System.nanoTime();
    plugin.register(fx.emulator.kubeletSocket());

    // A lower bound only (the delay is what is under test), never an upper one.
    assertThat(Duration.ofNanos(System.nanoTime() - sent))
        .isGreaterThanOrEqualTo(Duration.ofMillis(300));
    assertThat(plugin.optionsCalledDuringRegister).containsExactly(true);
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.emulator.devices(RESOURCE).size() == 1);
    assertThat(fx.emulator.registrations()).isEqualTo(1);
  }

  @Test
  void registerDialsPluginAndReadsItsOptionsBeforeReturning() throws Exception {
    fx.start();
    FakeDevicePlugin plugin = fx.registered("video.sock", RESOURCE, PLAIN, healthy("a"));

    assertThat(plugin.optionsCalledDuringRegister).containsExactly(true);
    assertThat(plugin.calls.indexOf("GetDevicePluginOptions"))
        .isGreaterThanOrEqualTo(0)
        .isLessThan(plugin.calls.indexOf(FakeDevicePlugin.REGISTER_RETURNED));
    assertThat(plugin.callsOf("ListAndWatch")).isEqualTo(1);
  }

  @Test
  void registerRejectsUnsupportedVersionWithTheKubeletsError() throws Exception {
    fx.start();
    FakeDevicePlugin plugin = fx.plugin("video.sock", RESOURCE, PLAIN, healthy("a"));

    assertThatThrownBy(() -> plugin.register(fx.emulator.kubeletSocket(), RESOURCE, "v1alpha"))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e -> {
              assertThat(e.getStatus().getCode()).isEqualTo(Status.Code.UNKNOWN);
              assertThat(e.getStatus().getDescription())
                  .isEqualTo(
                      "requested API version \"v1alpha\" is not supported by kubelet."
                          + " Supported versions are [\"v1beta1\"]");
            });
    assertThat(plugin.calls).isEmpty();
    assertThat(fx.emulator.capacity()).isEmpty();
    assertThat(fx.emulator.registrations()).isZero();
    await()
        .atMost(Duration.ofSeconds(10))
        .untilAsserted(() -> assertThat(fx.events.of("registrationRejected")).hasSize(1));
  }

  @ParameterizedTest
  @ValueSource(
      strings = {
        "udev-video",
        "kubernetes.io/video",
        "vendor.kubernetes.io/video",
        "akri.sh/udev/video",
        "Akri.sh/video",
        "akri.sh/",
        "/video",
        "akri.sh/-video",
        "akri.sh/video_",
        "requests.akri.sh/video",
        "akri.sh/aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
      })
  void registerRejectsInvalidResourceNamesWithTheKubeletsError(String name) throws Exception {
    fx.start();
    FakeDevicePlugin plugin = fx.plugin("video.sock", name, PLAIN, healthy("a"));

    assertThatThrownBy(() -> plugin.register(fx.emulator.kubeletSocket()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .isEqualTo("the ResourceName \"" + name + "\" is invalid"));
    assertThat(plugin.calls).isEmpty();
    assertThat(fx.emulator.capacity()).isEmpty();
  }

  @Test
  void registerFailsWhenTheEndpointDoesNotAcceptWithinTheDialTimeout() throws Exception {
    fx.start(b -> b.dialTimeout(Duration.ofMillis(300)));
    FakeDevicePlugin plugin = fx.plugin("video.sock", RESOURCE, PLAIN, healthy("a"));
    plugin.close(); // the socket file is gone: nothing to dial

    assertThatThrownBy(() -> plugin.register(fx.emulator.kubeletSocket()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .isEqualTo("failed to dial device plugin: context deadline exceeded"));
    assertThat(fx.emulator.registrations()).isZero();
    assertThat(fx.emulator.registeredResources()).isEmpty();
  }

  @Test
  void registerFailsWhenGetDevicePluginOptionsFails() throws Exception {
    fx.start();
    FakeDevicePlugin plugin = fx.plugin("video.sock", RESOURCE, PLAIN, healthy("a"));
    plugin.optionsFailure = java.util.Optional.of(Status.INTERNAL.withDescription("no options"));

    assertThatThrownBy(() -> plugin.register(fx.emulator.kubeletSocket()))
        .isInstanceOfSatisfying(
            StatusRuntimeException.class,
            e ->
                assertThat(e.getStatus().getDescription())
                    .isEqualTo(
                        "failed to get device plugin options: rpc error: code = Internal desc = no"
                            + " options"));
    assertThat(plugin.callsOf("ListAndWatch")).isZero();
    assertThat(fx.emulator.registeredResources()).isEmpty();
  }

  @Test
  void registeringTheSameResourceAgainReplacesTheEndpoint() throws Exception {
    fx.start();
    FakeDevicePlugin old = fx.registered("old.sock", RESOURCE, PLAIN, healthy("o1"));
    FakeDevicePlugin replacement = fx.plugin("new.sock", RESOURCE, PLAIN, healthy("n1"));
    replacement.setDevices(healthy("n1"), healthy("n2"));
    replacement.register(fx.emulator.kubeletSocket());

    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> fx.emulator.devices(RESOURCE).keySet().equals(java.util.Set.of("n1", "n2")));
    // The kubelet closed its client of the old endpoint.
    await().atMost(Duration.ofSeconds(10)).until(() -> old.openStreams() == 0);
    // Messages or the end of the old stream no longer touch the resource.
    old.setDevices(healthy("o1"), healthy("o2"), healthy("o3"));
    old.endStreams();
    replacement.setDevices(healthy("n1"), healthy("n2"), unhealthy("n3"));
    await().atMost(Duration.ofSeconds(10)).until(() -> fx.emulator.devices(RESOURCE).size() == 3);

    assertThat(fx.emulator.devices(RESOURCE)).containsOnlyKeys("n1", "n2", "n3");
    assertThat(fx.emulator.registeredResources()).containsExactly(RESOURCE);
    assertThat(fx.emulator.allocatable()).containsEntry(RESOURCE, 2L);
    assertThat(fx.emulator.registrations()).isEqualTo(2);
    assertThat(fx.events.of("streamEnded")).isEmpty();
  }

  @Test
  void manyPluginsRegisterConcurrentlyOnASharedEventLoopGroup() throws Exception {
    fx.start(b -> b.eventLoopGroup(fx.group));
    int count = 20;
    List<FakeDevicePlugin> plugins = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      plugins.add(fx.plugin("p" + i + ".sock", "akri.sh/dev-" + i, PLAIN, healthy("d" + i)));
    }
    ExecutorService pool = Executors.newFixedThreadPool(8);
    try {
      List<Future<?>> done = new ArrayList<>();
      for (FakeDevicePlugin p : plugins) {
        done.add(pool.submit(() -> p.register(fx.emulator.kubeletSocket())));
      }
      for (Future<?> f : done) {
        f.get();
      }
    } finally {
      pool.shutdownNow();
    }

    await().atMost(Duration.ofSeconds(10)).until(() -> fx.emulator.allocatable().size() == count);
    assertThat(fx.emulator.allocatable().values()).containsOnly(1L);
    assertThat(fx.emulator.registeredResources()).hasSize(count);
    assertThat(fx.emulator.registrations()).isEqualTo(count);
  }

  @Test
  void closeRemovesTheKubeletSocket() throws Exception {
    KubeletEmulator emulator = fx.start();
    assertThat(emulator.kubeletSocket()).exists();
    assertThat(emulator.podResourcesSocket()).exists();

    emulator.close();
    emulator.close(); // idempotent

    assertThat(emulator.kubeletSocket()).doesNotExist();
    assertThatThrownBy(() -> emulator.admit(Pod.of("default", "p")))
        .isInstanceOf(IllegalStateException.class);
  }
}
