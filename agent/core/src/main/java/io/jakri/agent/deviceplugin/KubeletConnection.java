package io.jakri.agent.deviceplugin;

import com.google.common.util.concurrent.ListenableFuture;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The kubelet's Registration service as {@link DevicePluginManager} sees it: {@code kubelet.sock}
 * in the device-plugin directory, which kubelet is behind it (a generation, new whenever the socket
 * file is created anew: a kubelet restart deletes every socket and listens again), and the Register
 * call. Confined to the manager's control thread, except {@link #generation()}.
 */
final class KubeletConnection {
  static final String KUBELET_SOCKET = "kubelet.sock";
  private static final String VERSION = "v1beta1";
  private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);

  private final Path socket;
  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private Object key;
  private volatile long generation;
  private ManagedChannel channel;

  KubeletConnection(Path dir, EventLoopGroup group, Executor grpcExecutor) {
    this.socket = dir.resolve(KUBELET_SOCKET);
    this.group = group;
    this.grpcExecutor = grpcExecutor;
  }

  /** The current kubelet's generation: 0 before any kubelet socket was seen. Any thread. */
  long generation() {
    return generation;
  }

  /** Whether the kubelet socket exists now. */
  boolean present() {
    return SocketFiles.exists(socket);
  }

  /**
   * Checks whether the kubelet socket is a new file since the last check; if so, the generation
   * goes up (the connection to the previous kubelet is dropped) and the new one is returned.
   */
  OptionalLong checkForNewKubelet() {
    Optional<Object> current = SocketFiles.key(socket);
    if (current.isEmpty() || current.get().equals(key)) {
      return OptionalLong.empty();
    }
    key = current.get();
    generation++;
    close();
    return OptionalLong.of(generation);
  }

  /** Sends Register for {@code resource} served on {@code endpoint} (a socket file name). */
  ListenableFuture<Empty> register(String resource, String endpoint) {
    RegisterRequest request =
        RegisterRequest.newBuilder()
            .setVersion(VERSION)
            .setEndpoint(endpoint)
            .setResourceName(resource)
            .setOptions(ResourceServer.OPTIONS)
            .build();
    return RegistrationGrpc.newFutureStub(channel())
        .withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
        .register(request);
  }

  /** Drops the connection (a later Register dials again). */
  void close() {
    if (channel != null) {
      channel.shutdownNow();
    }
    channel = null;
  }

  private ManagedChannel channel() {
    if (channel == null) {
      channel =
          NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
              .channelType(EpollDomainSocketChannel.class)
              .eventLoopGroup(group)
              .executor(grpcExecutor)
              .usePlaintext()
              .build();
    }
    return channel;
  }
}
