package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.FakeDevicePlugin.healthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.options;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.unhealthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.withHealth;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StreamLifecycleIT {
  private static final String RESOURCE = "akri.sh/onvif-camera";
  private static final DevicePluginOptions PLAIN = options(false, false);
  private static final Duration WAIT = Duration.ofSeconds(10);

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
  void everyListAndWatchMessageIsAFullSnapshot() throws Exception {
    fx.start();
    FakeDevicePlugin plugin =
        fx.registered("cam.sock", RESOURCE, PLAIN, healthy("a"), healthy("b"));

    plugin.setDevices(healthy("a"), unhealthy("b"), healthy("c"));
    await().atMost(WAIT).until(() -> fx.emulator.capacity().get(RESOURCE) == 3L);
    assertThat(fx.emulator.allocatable()).containsEntry(RESOURCE, 2L);

    plugin.setDevices(healthy("c"));
    await().atMost(WAIT).until(() -> fx.emulator.capacity().get(RESOURCE) == 1L);
    assertThat(fx.emulator.devices(RESOURCE)).containsExactly(Map.entry("c", "Healthy"));
    assertThat(fx.emulator.allocatable()).containsEntry(RESOURCE, 1L);
    // Listener events are delivered after the state they describe is visible: awaited.
    await().atMost(WAIT).untilAsserted(() -> assertThat(fx.events.of("snapshot")).hasSize(3));
  }

  @Test
  void anyHealthOtherThanHealthyCountsAsUnhealthy() throws Exception {
    fx.start();
    fx.registered(
        "cam.sock",
        RESOURCE,
        PLAIN,
        healthy("a"),
        withHealth("b", "healthy"),
        withHealth("c", ""),
        withHealth("d", "Degraded"));

    assertThat(fx.emulator.capacity()).containsEntry(RESOURCE, 4L);
    assertThat(fx.emulator.allocatable()).containsEntry(RESOURCE, 1L);
    assertThat(fx.emulator.devices(RESOURCE))
        .containsEntry("b", "Unhealthy")
        .containsEntry("c", "Unhealthy")
        .containsEntry("d", "Unhealthy");
  }

  @Test
  void streamEndMakesEveryDeviceUnhealthyThenDropsTheResourceAfterTheStaleTimeout()
      throws Exception {
    fx.start(b -> b.staleResourceTimeout(Duration.ofSeconds(2)));
    FakeDevicePlugin plugin =
        fx.registered("cam.sock", RESOURCE, PLAIN, healthy("a"), healthy("b"));

    plugin.endStreams();
    await().atMost(WAIT).until(() -> fx.emulator.allocatable().get(RESOURCE) == 0L);
    assertThat(fx.emulator.capacity()).containsEntry(RESOURCE, 2L);
    assertThat(fx.emulator.devices(RESOURCE))
        .containsExactly(Map.entry("a", "Unhealthy"), Map.entry("b", "Unhealthy"));
    assertThat(fx.emulator.registeredResources()).isEmpty();

    await().atMost(WAIT).until(() -> fx.emulator.capacity().get(RESOURCE) == 0L);
    assertThat(fx.emulator.capacity()).containsExactly(Map.entry(RESOURCE, 0L));
    assertThat(fx.emulator.allocatable()).containsExactly(Map.entry(RESOURCE, 0L));
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(fx.events.events)
                    .containsSubsequence("streamEnded " + RESOURCE, "resourceDropped " + RESOURCE));
    // The kubelet never redials: the plugin saw exactly one ListAndWatch.
    assertThat(plugin.callsOf("ListAndWatch")).isEqualTo(1);
  }

  @Test
  void onlyANewRegisterBringsAStoppedResourceBack() throws Exception {
    fx.start();
    FakeDevicePlugin plugin = fx.registered("cam.sock", RESOURCE, PLAIN, healthy("a"));
    plugin.endStreams();
    await().atMost(WAIT).until(() -> fx.emulator.allocatable().get(RESOURCE) == 0L);

    plugin.register(fx.emulator.kubeletSocket());

    await().atMost(WAIT).until(() -> fx.emulator.allocatable().get(RESOURCE) == 1L);
    assertThat(fx.emulator.registeredResources()).containsExactly(RESOURCE);
    assertThat(plugin.callsOf("ListAndWatch")).isEqualTo(2);
  }

  @Test
  void restartDeletesSocketsButKeepsTheCheckpointAndOtherFilesAndServesKubeletSockAgain()
      throws Exception {
    KubeletEmulator emulator = fx.start(b -> b.staleResourceTimeout(Duration.ofMinutes(5)));
    FakeDevicePlugin plugin = fx.registered("cam.sock", RESOURCE, PLAIN, healthy("a"));
    emulator.admit(Pod.of("default", "viewer", Container.of("main", RESOURCE, 1)));
    Path notes = Files.writeString(fx.dir.resolve("notes.txt"), "keep me");
    Path subdir = Files.createDirectories(fx.dir.resolve("sub"));
    var stray =
        NettyServerBuilder.forAddress(new DomainSocketAddress(subdir.resolve("s.sock").toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(fx.group)
            .workerEventLoopGroup(fx.group)
            .build()
            .start();
    Path checkpoint = fx.dir.resolve(KubeletEmulator.CHECKPOINT_FILE);
    await().atMost(WAIT).until(() -> Files.exists(checkpoint));
    Object inodeBefore = Files.getAttribute(emulator.kubeletSocket(), "unix:ino");

    emulator.restart();

    assertThat(plugin.socket).doesNotExist();
    assertThat(emulator.kubeletSocket()).exists();
    assertThat(Files.getAttribute(emulator.kubeletSocket(), "unix:ino")).isNotEqualTo(inodeBefore);
    assertThat(checkpoint).exists();
    assertThat(Files.readString(checkpoint)).contains("\"PodUID\":\"default/viewer\"");
    assertThat(notes).hasContent("keep me");
    assertThat(subdir.resolve("s.sock")).exists(); // only the top level is cleaned
    assertThat(emulator.registeredResources()).isEmpty();
    assertThat(emulator.capacity()).containsExactly(Map.entry(RESOURCE, 0L));
    assertThat(emulator.pods()).hasSize(1);
    await()
        .atMost(WAIT)
        .untilAsserted(
            () ->
                assertThat(fx.events.of("streamEnded")).containsExactly("streamEnded " + RESOURCE));
    stray.shutdownNow().awaitTermination(5, TimeUnit.SECONDS);

    // The plugin notices, serves again and registers again.
    plugin.close();
    FakeDevicePlugin again = fx.plugin("cam.sock", RESOURCE, PLAIN, healthy("a"), healthy("b"));
    again.register(emulator.kubeletSocket());
    await().atMost(WAIT).until(() -> emulator.allocatable().get(RESOURCE) == 2L);
    assertThat(emulator.registeredResources()).containsExactly(RESOURCE);
  }

  @Test
  void startKeepsSocketsItDidNotCreateUnlikeAStartingKubelet() throws Exception {
    Files.createDirectories(fx.dir);
    FakeDevicePlugin early = fx.plugin("early.sock", RESOURCE, PLAIN, healthy("a"));
    assertThat(early.socket).exists();

    fx.start();

    assertThat(early.socket).exists();
    assertThat(fx.emulator.kubeletSocket()).exists();
    // The plugin still serves and registers as usual.
    early.register(fx.emulator.kubeletSocket());
    await()
        .atMost(WAIT)
        .until(() -> Long.valueOf(1).equals(fx.emulator.allocatable().get(RESOURCE)));
  }
}
