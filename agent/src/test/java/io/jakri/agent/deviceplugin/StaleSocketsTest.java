package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.deviceplugin.ResourceServer.StaleSockets;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class StaleSocketsTest {

  @TempDir Path dir;

  @Test
  void removesDeadAgentSocketsAndKeepsLiveOnesAndOthers() throws Exception {
    Path dead = dir.resolve("cams-8120fe-1795252708.sock");
    Path deadClass = dir.resolve("jakri-class-example.com_widget-1795252709.sock");
    try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      gone.bind(UnixDomainSocketAddress.of(dead));
    }
    try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      gone.bind(UnixDomainSocketAddress.of(deadClass));
    }
    Path kubelet = dir.resolve("kubelet.sock");
    Path otherPlugin = dir.resolve("nvidia.sock");
    Files.createFile(kubelet);
    Files.createFile(otherPlugin);
    Path live = dir.resolve("live-abcdef-1795252710.sock");
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(live));

      assertThat(StaleSockets.remove(dir)).containsExactlyInAnyOrder(dead, deadClass);

      assertThat(live).exists();
      assertThat(kubelet).exists();
      assertThat(otherPlugin).exists();
      assertThat(dead).doesNotExist();
    }
  }

  @Test
  void aMissingDirectoryIsNotAnError() {
    assertThat(StaleSockets.remove(dir.resolve("absent"))).isEmpty();
  }
}
