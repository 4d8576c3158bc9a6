package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** {@link RegistrationSocket} on a real Unix socket. */
class RegistrationSocketIT {

  @TempDir Path dir;
  EpollEventLoopGroup group;
  ExecutorService executor;

  @BeforeEach
  void setUp() {
    group = new EpollEventLoopGroup(1);
    executor = Executors.newCachedThreadPool();
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    executor.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  RegistrationSocket socket(Path path) {
    return new RegistrationSocket(path, group, executor);
  }

  static RegistrationService service(Path dir) {
    return new RegistrationService(dir, 10, System::nanoTime, (e, s) -> true);
  }

  static boolean answers(Path path) {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(path));
      return true;
    } catch (IOException e) {
      return false;
    }
  }

  @Test
  void aStaleSocketIsReplacedServedOwnerOnlyAndRemovedOnStop() throws Exception {
    Path path = dir.resolve(ExternalHandlers.SOCKET_NAME);
    try (ServerSocketChannel gone = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      gone.bind(UnixDomainSocketAddress.of(path)); // its file stays after close
    }
    assertThat(path).exists();
    assertThat(answers(path)).isFalse();

    RegistrationSocket socket = socket(path);
    socket.removeStale();
    assertThat(path).doesNotExist();
    socket.serve(service(dir));
    try {
      assertThat(answers(path)).isTrue();
      assertThat(PosixFilePermissions.toString(Files.getPosixFilePermissions(path)))
          .isEqualTo("rw-------");
    } finally {
      socket.stop();
    }
    assertThat(path).doesNotExist();
    socket.stop(); // nothing served: nothing to do
  }

  @Test
  void aSocketThatAnswersIsAnotherAgentsAndRefused() throws Exception {
    Path path = dir.resolve(ExternalHandlers.SOCKET_NAME);
    RegistrationSocket first = socket(path);
    first.serve(service(dir));
    try {
      assertThatThrownBy(() -> socket(path).removeStale())
          .isInstanceOf(IOException.class)
          .hasMessage(path + " answers: another agent serves this discovery-handlers directory");
      assertThat(answers(path)).isTrue();
    } finally {
      first.stop();
    }
  }
}
