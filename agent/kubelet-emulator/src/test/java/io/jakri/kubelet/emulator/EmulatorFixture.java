package io.jakri.kubelet.emulator;

import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.UnaryOperator;

/**
 * One emulator on a temp dir plus the fake plugins of a test, all on one shared event loop group
 * (the plugins') while the emulator owns its own unless a test passes the shared one.
 */
final class EmulatorFixture implements AutoCloseable {
  final Path root;
  final Path dir;

  @SuppressWarnings("deprecation") // the group LIBRARIES.md verified
  final EventLoopGroup group = new EpollEventLoopGroup(2);

  final RecordingListener events = new RecordingListener();
  private final List<FakeDevicePlugin> plugins = Collections.synchronizedList(new ArrayList<>());
  KubeletEmulator emulator;

  EmulatorFixture(Path root) {
    this.root = root;
    this.dir = root.resolve("device-plugins");
  }

  KubeletEmulator start() throws IOException {
    return start(b -> b);
  }

  KubeletEmulator start(UnaryOperator<KubeletEmulator.Builder> config) throws IOException {
    emulator = config.apply(KubeletEmulator.builder(dir)).build();
    emulator.addListener(events);
    emulator.start();
    return emulator;
  }

  FakeDevicePlugin plugin(
      String socketName, String resource, DevicePluginOptions options, Device... devices)
      throws IOException {
    FakeDevicePlugin plugin =
        FakeDevicePlugin.serve(dir.resolve(socketName), resource, options, group, devices);
    plugins.add(plugin);
    return plugin;
  }

  /** Serves, registers and waits until the emulator saw the first snapshot. */
  FakeDevicePlugin registered(
      String socketName, String resource, DevicePluginOptions options, Device... devices)
      throws IOException {
    FakeDevicePlugin plugin = plugin(socketName, resource, options, devices);
    plugin.register(emulator.kubeletSocket());
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> emulator.devices(resource).size() == devices.length);
    return plugin;
  }

  @Override
  public void close() {
    List<FakeDevicePlugin> all = new ArrayList<>(plugins);
    Collections.reverse(all);
    all.forEach(FakeDevicePlugin::close);
    if (emulator != null) {
      emulator.close();
    }
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
  }
}
