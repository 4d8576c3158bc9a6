package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.ServerSocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import v0.Discovery.RegisterDiscoveryHandlerRequest;
import v0.Discovery.RegisterDiscoveryHandlerRequest.EndpointType;
import v0.RegistrationGrpc;

/**
 * The registration socket against bad input over the wire: each refusal is INVALID_ARGUMENT naming
 * the rule, a flood is cut by the rate limit, and valid registrations keep working.
 */
class RegistrationBoundsIT {

  @TempDir Path dir;
  EpollEventLoopGroup group;
  ScheduledExecutorService scheduler;
  ExternalHandlers handlers;
  ManagedChannel channel;
  RegistrationGrpc.RegistrationBlockingStub stub;

  @BeforeEach
  void start() throws Exception {
    group = new EpollEventLoopGroup(1);
    scheduler = Executors.newSingleThreadScheduledExecutor();
    handlers =
        new ExternalHandlers(
            dir,
            group,
            Executors.newCachedThreadPool(),
            scheduler,
            new ExternalHandlers.Settings(
                Duration.ofSeconds(3), Duration.ofSeconds(1), Duration.ofSeconds(1), 20),
            System::nanoTime);
    // a stale socket file from a killed agent is replaced
    try (ServerSocketChannel stale = ServerSocketChannel.open(StandardProtocolFamily.UNIX)) {
      stale.bind(UnixDomainSocketAddress.of(dir.resolve(ExternalHandlers.SOCKET_NAME)));
    }
    handlers.start();
    channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(handlers.socket().toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .build();
    stub = RegistrationGrpc.newBlockingStub(channel).withDeadlineAfter(10, TimeUnit.SECONDS);
  }

  @AfterEach
  void stop() throws Exception {
    channel.shutdownNow();
    handlers.close();
    scheduler.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
  }

  private Status register(String name, String endpoint, EndpointType type) {
    try {
      stub.registerDiscoveryHandler(
          RegisterDiscoveryHandlerRequest.newBuilder()
              .setName(name)
              .setEndpoint(endpoint)
              .setEndpointType(type)
              .build());
      return Status.OK;
    } catch (StatusRuntimeException e) {
      return e.getStatus();
    }
  }

  @Test
  void badRegistrationsAreRefusedNamingTheRuleAndTheSocketIsOwnerOnly() throws Exception {
    assertThat(Files.getPosixFilePermissions(handlers.socket()))
        .isEqualTo(PosixFilePermissions.fromString("rw-------"));
    Path file = Files.writeString(dir.resolve("plain.sock"), "");
    Object[][] cases = {
      {"", "http://1.2.3.4:5", EndpointType.NETWORK, "name is empty"},
      {"bad name!", "http://1.2.3.4:5", EndpointType.NETWORK, "is not a handler name"},
      {"udev", "/etc/passwd", EndpointType.UDS, "not a socket path inside"},
      {"udev", file.toString(), EndpointType.UDS, "is not a Unix socket"},
      {"onvif", "1.2.3.4:5", EndpointType.NETWORK, "is not http://host:port"},
      {"onvif", "http://1.2.3.4", EndpointType.NETWORK, "is not http://host:port"},
    };
    for (Object[] c : cases) {
      Status status = register((String) c[0], (String) c[1], (EndpointType) c[2]);
      assertThat(status.getCode()).as(c[1].toString()).isEqualTo(Status.Code.INVALID_ARGUMENT);
      assertThat(status.getDescription()).contains((String) c[3]);
    }
    assertThat(handlers.endpoints()).isEmpty();
    assertThat(handlers.names()).isEmpty();
  }

  @Test
  void aFloodIsCutByTheRateLimitAndValidRegistrationsStillWork() {
    int refused = 0;
    for (int i = 0; i < 300; i++) {
      Status status = register("flood" + i, "http://10.0.0.1:" + (1000 + i), EndpointType.NETWORK);
      if (status.getCode() == Status.Code.RESOURCE_EXHAUSTED) {
        refused++;
      } else {
        assertThat(status.getCode()).isEqualTo(Status.Code.OK);
      }
    }
    assertThat(refused).isGreaterThan(0);
    assertThat(handlers.endpoints().size()).isEqualTo(300 - refused).isLessThan(300);
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> register("onvif", "http://10.0.0.2:10000", EndpointType.NETWORK).isOk());
    assertThat(handlers.find("onvif")).isPresent();
  }

  @Test
  void atMostMaxEndpointsAreKept() {
    for (int i = 0; i < ExternalHandlers.MAX_ENDPOINTS; i++) {
      assertThat(
              handlers.register(
                  new ExternalEndpoint(
                      "many",
                      "http://10.0.0.1:" + (1000 + i),
                      ExternalEndpoint.Type.NETWORK,
                      false),
                  "test"))
          .isTrue();
    }
    Status status = register("one-more", "http://10.0.0.3:1", EndpointType.NETWORK);
    assertThat(status.getCode()).isEqualTo(Status.Code.RESOURCE_EXHAUSTED);
    assertThat(status.getDescription()).contains(ExternalHandlers.MAX_ENDPOINTS + " endpoints");
    assertThat(handlers.endpoints()).hasSize(ExternalHandlers.MAX_ENDPOINTS);
    assertThat(handlers.find("one-more")).isEmpty();
    // registering a known endpoint again is still accepted
    assertThat(register("many", "http://10.0.0.1:1000", EndpointType.NETWORK).isOk()).isTrue();
  }
}
