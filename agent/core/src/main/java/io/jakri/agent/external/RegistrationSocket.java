package io.jakri.agent.external;

import io.grpc.BindableService;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.io.IOException;
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The registration socket: a gRPC server on a Unix socket, owner-only, bounded in message size,
 * calls per connection and idle time. A socket file left by an agent that is gone is removed; one
 * that answers is another agent's, and refused.
 */
final class RegistrationSocket {

  // ExternalHandlers' logger: these lines were always its.
  private static final Logger LOG = LoggerFactory.getLogger(ExternalHandlers.class);

  /** Largest registration message (and metadata) accepted. */
  static final int MAX_REGISTRATION_BYTES = 16 * 1024;

  private final Path socket;
  private final EventLoopGroup group;
  private final Executor executor;
  private Server server;

  RegistrationSocket(Path socket, EventLoopGroup group, Executor executor) {
    this.socket = socket;
    this.group = group;
    this.executor = executor;
  }

  /**
   * Removes a stale socket file; refuses (IOException) one that answers: another agent serves this
   * directory.
   */
  void removeStale() throws IOException {
    if (Files.exists(socket) || Files.isSymbolicLink(socket)) {
      if (answers(socket)) {
        throw new DirectoryInUseException(
            socket + " answers: another agent serves this discovery-handlers directory");
      }
      Files.delete(socket);
      LOG.info("removed stale registration socket {}", socket);
    }
  }

  private static boolean answers(Path socket) {
    try (SocketChannel ch = SocketChannel.open(StandardProtocolFamily.UNIX)) {
      ch.connect(UnixDomainSocketAddress.of(socket));
      return true;
    } catch (IOException | RuntimeException e) {
      return false;
    }
  }

  /** Serves {@code service} on the socket, which only its owner may open. */
  void serve(BindableService service) throws IOException {
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .executor(executor)
            .maxInboundMessageSize(MAX_REGISTRATION_BYTES)
            .maxInboundMetadataSize(MAX_REGISTRATION_BYTES)
            .maxConcurrentCallsPerConnection(16)
            .maxConnectionIdle(1, TimeUnit.MINUTES)
            .handshakeTimeout(5, TimeUnit.SECONDS)
            .addService(service);
    InternalNettyServerBuilder.setStatsEnabled(builder, false);
    InternalNettyServerBuilder.setTracingEnabled(builder, false);
    Server started = builder.build().start();
    synchronized (this) {
      server = started;
    }
    try {
      Files.setPosixFilePermissions(socket, PosixFilePermissions.fromString("rw-------"));
    } catch (IOException | UnsupportedOperationException e) {
      LOG.warn("could not make {} owner-only: {}", socket, e.toString());
    }
    LOG.info("serving Akri's discovery-handler registration on {}", socket);
  }

  /** Stops serving (waiting up to 2 s) and removes the socket; nothing when not serving. */
  void stop() {
    Server s;
    synchronized (this) {
      s = server;
      server = null;
    }
    if (s != null) {
      s.shutdownNow();
      try {
        s.awaitTermination(2, TimeUnit.SECONDS);
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      try {
        Files.deleteIfExists(socket);
      } catch (IOException e) {
        LOG.debug("removing {}: {}", socket, e.toString());
      }
    }
  }
}
