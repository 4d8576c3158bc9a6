package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.FakeDevicePlugin.healthy;
import static io.jakri.kubelet.emulator.FakeDevicePlugin.options;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The emulator never touches a real kubelet: it refuses a directory whose {@code kubelet.sock}
 * answers (or that holds a real kubelet's checkpoint), removes no socket it did not create or that
 * never registered with it, and keeps its PodResources socket inside its own directory. Real Unix
 * sockets on a temp dir stand in for the kubelet and for other device plugins.
 */
class EmulatorDirectoryIT {
  private static final String RESOURCE = "akri.sh/onvif-camera";
  private static final Duration WAIT = Duration.ofSeconds(10);

  @TempDir Path tmp;
  private EmulatorFixture fx;
  private final List<ServerSocketChannel> listeners = new ArrayList<>();

  @BeforeEach
  void setUp() throws IOException {
    fx = new EmulatorFixture(tmp);
    Files.createDirectories(fx.dir);
  }

  @AfterEach
  void tearDown() throws IOException {
    fx.close();
    for (ServerSocketChannel l : listeners) {
      l.close();
    }
  }

  /** A listening Unix socket, like a running kubelet's or another plugin's. */
  private Path listen(Path socket) throws IOException {
    ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
    channel.bind(UnixDomainSocketAddress.of(socket));
    listeners.add(channel);
    return socket;
  }

  /** A socket file nobody listens on any more (Java leaves the file when the channel closes). */
  private static Path dead(Path socket) throws IOException {
    try (ServerSocketChannel channel = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      channel.bind(UnixDomainSocketAddress.of(socket));
    }
    return socket;
  }

  private static boolean accepts(Path socket) {
    try (SocketChannel c = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      return c.connect(UnixDomainSocketAddress.of(socket));
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void refusesADirectoryWhoseKubeletSockAcceptsConnectionsAndRemovesNothing() throws Exception {
    Path kubelet = listen(fx.dir.resolve(KubeletEmulator.KUBELET_SOCKET));
    Path otherPlugin = listen(fx.dir.resolve("nvidia-gpu.sock"));
    Path deadPlugin = dead(fx.dir.resolve("old-plugin.sock"));
    KubeletEmulator emulator = KubeletEmulator.builder(fx.dir).build();

    assertThatThrownBy(emulator::start)
        .isInstanceOf(EmulatorStartException.class)
        .hasMessage(
            "a kubelet is already serving "
                + kubelet
                + ": the kubelet emulator will not take its place; give it a directory of its own");
    emulator.close();

    assertThat(accepts(kubelet)).isTrue();
    assertThat(accepts(otherPlugin)).isTrue();
    assertThat(deadPlugin).exists();
    assertThat(fx.dir.resolve(KubeletEmulator.CHECKPOINT_FILE)).doesNotExist();
    assertThat(emulator.podResourcesSocket()).doesNotExist();
    try (var files = Files.list(fx.dir)) {
      assertThat(files.map(p -> p.getFileName().toString()))
          .containsExactlyInAnyOrder("kubelet.sock", "nvidia-gpu.sock", "old-plugin.sock");
    }
  }

  @Test
  void refusesAPodResourcesSocketThatAcceptsConnections() throws Exception {
    Path real =
        listen(Files.createDirectories(tmp.resolve("pod-resources")).resolve("kubelet.sock"));
    KubeletEmulator emulator = KubeletEmulator.builder(fx.dir).podResourcesSocket(real).build();

    assertThatThrownBy(emulator::start)
        .isInstanceOf(EmulatorStartException.class)
        .hasMessageStartingWith("something already serves " + real);
    emulator.close();

    assertThat(accepts(real)).isTrue();
    assertThat(fx.dir.resolve(KubeletEmulator.KUBELET_SOCKET)).doesNotExist();
  }

  @Test
  void refusesARealKubeletsCheckpointAndLeavesItAsItWas() throws Exception {
    String real =
        "{\"Data\":{\"PodDeviceEntries\":null,\"RegisteredDevices\":{}},\"Checksum\":2466307376}";
    Path checkpoint = Files.writeString(fx.dir.resolve(KubeletEmulator.CHECKPOINT_FILE), real);
    KubeletEmulator emulator = KubeletEmulator.builder(fx.dir).build();

    assertThatThrownBy(emulator::start)
        .isInstanceOf(EmulatorStartException.class)
        .hasMessage(
            checkpoint
                + " is a real kubelet's checkpoint: the kubelet emulator will not overwrite it;"
                + " give it a directory of its own");
    emulator.close();

    assertThat(checkpoint).hasContent(real);
    assertThat(fx.dir.resolve(KubeletEmulator.KUBELET_SOCKET)).doesNotExist();
  }

  @Test
  void startsOverItsOwnCheckpointAndADeadKubeletSockLeftBehind() throws Exception {
    Path kubelet = dead(fx.dir.resolve(KubeletEmulator.KUBELET_SOCKET));
    Files.writeString(
        fx.dir.resolve(KubeletEmulator.CHECKPOINT_FILE),
        Checkpoint.json(List.of(), java.util.Map.of()));

    fx.start();

    assertThat(accepts(kubelet)).isTrue();
  }

  @Test
  void socketsItDidNotCreateSurviveStartRestartAndClose() throws Exception {
    Path foreignLive = listen(fx.dir.resolve("other-vendor.sock"));
    Path foreignDead = dead(fx.dir.resolve("left-behind.sock"));
    KubeletEmulator emulator = fx.start();
    FakeDevicePlugin plugin =
        fx.registered("cam.sock", RESOURCE, options(false, false), healthy("a"));

    emulator.restart();

    // Like a restarting kubelet it removes the socket of the plugin that registered with it ...
    assertThat(plugin.socket).doesNotExist();
    assertThat(emulator.kubeletSocket()).exists();
    // ... and nothing else.
    assertThat(accepts(foreignLive)).isTrue();
    assertThat(foreignDead).exists();

    emulator.close();

    assertThat(emulator.kubeletSocket()).doesNotExist();
    assertThat(emulator.podResourcesSocket()).doesNotExist();
    assertThat(accepts(foreignLive)).isTrue();
    assertThat(foreignDead).exists();
  }

  @Test
  void podResourcesSocketIsInsideItsOwnDirectoryByDefault() throws Exception {
    KubeletEmulator emulator = fx.start();

    assertThat(emulator.podResourcesSocket())
        .isEqualTo(fx.dir.resolve(KubeletEmulator.POD_RESOURCES_SOCKET));
    await().atMost(WAIT).until(() -> accepts(emulator.podResourcesSocket()));
    assertThat(tmp.resolve("pod-resources")).doesNotExist();
  }

  @Test
  void aDirectoryThatCannotBeCreatedIsOneClearLine() throws Exception {
    Path file = Files.writeString(tmp.resolve("a-file"), "not a directory");
    Path dir = file.resolve("device-plugins");
    KubeletEmulator emulator = KubeletEmulator.builder(dir).build();

    assertThatThrownBy(emulator::start)
        .isInstanceOf(EmulatorStartException.class)
        .hasMessage("cannot create directory " + dir + ": a part of its path is not a directory")
        .hasNoCause();
    emulator.close();

    assertThat(file).hasContent("not a directory");
  }
}
