package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.jakri.agent.LogCapture;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import java.net.InetSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Endpoints whose socket accepts connections but whose owner never reads them (a frozen process's
 * Unix socket, a host that blackholes after the TCP handshake): the HTTP/2 handshake never
 * completes, no stream exists for a keepalive PING, and each dial fails after the keepalive timeout
 * instead of waiting forever; the endpoints are dropped after {@code dropAfter}, one line each.
 */
class ExternalUnansweringEndpointIT {

  @TempDir Path dir;

  @Test
  void endpointsThatAcceptButNeverAnswerAreDropped() throws Exception {
    ExternalHandlers.Settings settings =
        new ExternalHandlers.Settings(
            Duration.ofSeconds(2),
            Duration.ofSeconds(1),
            Duration.ofSeconds(30),
            20,
            ExternalHandlers.Settings.MIN_KEEPALIVE,
            Duration.ofSeconds(1));
    EpollEventLoopGroup group = new EpollEventLoopGroup(1);
    ScheduledExecutorService scheduler = Executors.newScheduledThreadPool(2);
    ExecutorService executor = Executors.newCachedThreadPool();
    Path socket = dir.resolve("frozen.sock");
    List<List<DiscoveredDevice>> seen = new CopyOnWriteArrayList<>();
    List<String> failures = new CopyOnWriteArrayList<>();
    try (LogCapture log = LogCapture.of(ExternalHandlers.class);
        ServerSocketChannel tcp = ServerSocketChannel.open();
        ServerSocketChannel uds = ServerSocketChannel.open(StandardProtocolFamily.UNIX);
        ExternalHandlers handlers =
            new ExternalHandlers(dir, group, executor, scheduler, settings, System::nanoTime)) {
      // bound and listening, never accepted: the kernel completes connects, nothing answers
      tcp.bind(new InetSocketAddress("127.0.0.1", 0), 16);
      uds.bind(UnixDomainSocketAddress.of(socket), 16);
      handlers.start();
      String network = "http://127.0.0.1:" + ((InetSocketAddress) tcp.getLocalAddress()).getPort();
      assertThat(
              handlers.register(
                  new ExternalEndpoint("mute", network, ExternalEndpoint.Type.NETWORK, false),
                  "test"))
          .isTrue();
      assertThat(
              handlers.register(
                  new ExternalEndpoint("mute", socket.toString(), ExternalEndpoint.Type.UDS, false),
                  "test"))
          .isTrue();
      long started = System.nanoTime();
      Discovery discovery =
          handlers
              .find("mute")
              .orElseThrow()
              .start(
                  new DiscoveryContext("mute-cfg", "node", "{}", Map.of(), scheduler),
                  new DeviceListener() {
                    @Override
                    public void devices(List<DiscoveredDevice> devices) {
                      seen.add(devices);
                    }

                    @Override
                    public void failed(String reason, Throwable cause) {
                      failures.add(reason);
                    }
                  });
      try {
        await()
            .atMost(Duration.ofSeconds(20))
            .pollInterval(Duration.ofMillis(20))
            .until(() -> handlers.endpoints().isEmpty());
        long droppedMs = (System.nanoTime() - started) / 1_000_000;
        assertThat(handlers.find("mute")).isEmpty();
        // a drop is logged just after the endpoint leaves (outside the lock)
        await()
            .atMost(Duration.ofSeconds(5))
            .until(() -> log.messages().stream().filter(m -> m.contains("mute at ")).count() >= 2);
        List<String> drops = log.messages().stream().filter(m -> m.contains("mute at ")).toList();
        assertThat(drops).hasSize(2);
        assertThat(drops)
            .allSatisfy(
                m ->
                    assertThat(m)
                        .contains("dropped: Discover kept failing for")
                        .contains("no answer to the HTTP/2 handshake in 1000 ms"));
        assertThat(drops)
            .anyMatch(m -> m.contains(network))
            .anyMatch(m -> m.contains(socket.toString()));
        assertThat(seen).allMatch(List::isEmpty);
        assertThat(failures).isEmpty();
        // each dial waited one keepalive timeout; dropped once failing for dropAfter
        assertThat(Duration.ofMillis(droppedMs))
            .isGreaterThanOrEqualTo(settings.keepaliveTimeout().plus(settings.dropAfter()))
            .isLessThan(
                settings
                    .keepaliveTimeout()
                    .multipliedBy(2)
                    .plus(settings.dropAfter())
                    .plusSeconds(5));
      } finally {
        discovery.close();
      }
    } finally {
      scheduler.shutdownNow();
      executor.shutdownNow();
      group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    }
  }
}
