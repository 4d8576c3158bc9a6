package io.jakri.agent.reclaim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.kubelet.emulator.KubeletEmulator;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class PodResourcesClientIT {

  @TempDir Path tmp;
  private EventLoopGroup group;
  private ExecutorService executor;
  private GrpcPodResourcesClient client;
  private KubeletEmulator kubelet;
  private Path socket;

  @BeforeEach
  @SuppressWarnings("deprecation") // the group LIBRARIES.md verified with domain sockets
  void setUp() {
    group = new EpollEventLoopGroup(1);
    executor = Executors.newFixedThreadPool(2);
    socket = tmp.resolve("pod-resources").resolve("kubelet.sock");
    client = new GrpcPodResourcesClient(socket, group, executor, Duration.ofSeconds(2));
  }

  @AfterEach
  void tearDown() throws InterruptedException {
    client.close();
    if (kubelet != null) {
      kubelet.close();
    }
    executor.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  private void startKubelet() throws Exception {
    kubelet =
        KubeletEmulator.builder(tmp.resolve("device-plugins")).podResourcesSocket(socket).build();
    kubelet.start();
  }

  @Test
  void missingSocketIsAnErrorNotAnEmptyAnswer() {
    assertThatThrownBy(client::devicesInUse)
        .isInstanceOf(PodResourcesException.class)
        .hasMessageContaining(socket.toString())
        .hasMessageContaining("UNAVAILABLE")
        .satisfies(
            e ->
                assertThat(e.getMessage())
                    .as("one line, no stack trace of the cause")
                    .doesNotContain("\n")
                    .doesNotContain("\tat ")
                    .doesNotContain("Errors.java"));
  }

  @Test
  void kubeletWithoutPodsAnswersWithNoDevices() throws Exception {
    startKubelet();
    assertThat(client.devicesInUse()).isEmpty();
  }

  @Test
  void kubeletStartingAfterAFailedCallIsReachedWithoutWaitingOutTheBackoff() throws Exception {
    for (int i = 0; i < 4; i++) {
      assertThatThrownBy(client::devicesInUse).isInstanceOf(PodResourcesException.class);
    }
    startKubelet();
    await()
        .atMost(Duration.ofSeconds(3))
        .ignoreException(PodResourcesException.class)
        .until(() -> client.devicesInUse().isEmpty());
  }

  @Test
  void kubeletGoingAwayIsAnError() throws Exception {
    startKubelet();
    assertThat(client.devicesInUse()).isEmpty();
    kubelet.close();
    kubelet = null;
    assertThatThrownBy(client::devicesInUse).isInstanceOf(PodResourcesException.class);
  }

  @Test
  void closedClientFails() throws Exception {
    startKubelet();
    client.close();
    assertThatThrownBy(client::devicesInUse).isInstanceOf(PodResourcesException.class);
  }
}
