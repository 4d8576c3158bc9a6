package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.deviceplugin.ResourceServer.SocketFiles;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class SocketFilesTest {

  @TempDir Path dir;

  @Test
  void aMissingSocketNeitherExistsNorHasAKey() {
    Path missing = dir.resolve("gone-123456-1.sock");

    assertThat(SocketFiles.exists(missing)).isFalse();
    assertThat(SocketFiles.key(missing)).isEmpty();
  }

  @Test
  void aSocketKeepsItsKeyAndASocketBoundAgainUnderTheSameNameGetsAnother() throws Exception {
    Path path = dir.resolve("cam-8120fe-1.sock");
    Optional<Object> first;
    try (ServerSocketChannel server = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      server.bind(UnixDomainSocketAddress.of(path));
      assertThat(SocketFiles.exists(path)).isTrue();
      first = SocketFiles.key(path);
      assertThat(first).isPresent();
      assertThat(SocketFiles.key(path)).isEqualTo(first);
    }
    // A kubelet restart deletes the file; a replacement server binds the same name anew. Another
    // file is kept open meanwhile so the old inode number is not handed out again at once.
    Files.delete(path);
    Path holder = Files.createFile(dir.resolve("holder"));
    try (ServerSocketChannel again = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      again.bind(UnixDomainSocketAddress.of(path));

      assertThat(SocketFiles.key(path)).isPresent().isNotEqualTo(first);
    }
    assertThat(holder).exists();
  }

  @Test
  void followsLinksUnlessToldNotTo() throws Exception {
    Path target = Files.createFile(dir.resolve("target"));
    Path link = Files.createSymbolicLink(dir.resolve("link.sock"), target);
    Path dangling = Files.createSymbolicLink(dir.resolve("dangling.sock"), dir.resolve("none"));

    assertThat(SocketFiles.key(link)).isPresent().isEqualTo(SocketFiles.key(target));
    assertThat(SocketFiles.key(link, LinkOption.NOFOLLOW_LINKS))
        .isPresent()
        .isNotEqualTo(SocketFiles.key(target));
    assertThat(SocketFiles.key(dangling)).isEmpty();
    assertThat(SocketFiles.key(dangling, LinkOption.NOFOLLOW_LINKS)).isEmpty();
  }
}
