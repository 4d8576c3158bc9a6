package io.jakri.kubelet.emulator;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * The emulator's gRPC servers on its Unix sockets (Registration on {@code kubelet.sock},
 * PodResources on its socket), on the emulator's event loop group and executor. Not thread-safe:
 * the emulator calls it under its lifecycle lock.
 */
final class EmulatorServers {
  private final EventLoopGroup group;
  private final Executor executor;
  private final EmulatorDirectory directory;
  private final List<Server> servers = new ArrayList<>();

  EmulatorServers(EventLoopGroup group, Executor executor, EmulatorDirectory directory) {
    this.group = group;
    this.executor = executor;
    this.directory = directory;
  }

  /**
   * Serves {@code service} on {@code socket}.
   *
   * @throws EmulatorStartException naming the socket if it cannot be bound
   */
  void serve(Path socket, BindableService service) throws IOException {
    Server server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .executor(executor)
            .addService(service)
            .build();
    try {
      server.start();
    } catch (IOException e) {
      throw EmulatorDirectory.cannotServe(socket, e);
    }
    directory.bound(socket);
    servers.add(server);
  }

  /** Stops every server now and waits up to 5 s for each. */
  void stop() {
    servers.forEach(Server::shutdownNow);
    try {
      for (Server s : servers) {
        s.awaitTermination(5, TimeUnit.SECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    servers.clear();
  }
}
