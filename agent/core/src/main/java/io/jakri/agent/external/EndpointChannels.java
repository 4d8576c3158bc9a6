package io.jakri.agent.external;

import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/** The gRPC channel to a handler's endpoint, on the agent's event loop group. */
final class EndpointChannels {

  private EndpointChannels() {}

  /**
   * A plaintext channel to {@code endpoint} (Unix socket or TCP), bounded in message size, with
   * keepalive PINGs while a stream is open ({@link ExternalHandlers.Settings#keepalive}).
   */
  static ManagedChannel open(
      ExternalEndpoint endpoint,
      EventLoopGroup group,
      Executor executor,
      ExternalHandlers.Settings settings) {
    NettyChannelBuilder builder =
        endpoint.type() == ExternalEndpoint.Type.UDS
            ? NettyChannelBuilder.forAddress(new DomainSocketAddress(endpoint.endpoint()))
                .channelType(EpollDomainSocketChannel.class)
            : NettyChannelBuilder.forAddress(endpoint.host(), endpoint.port())
                .channelType(EpollSocketChannel.class);
    builder
        .eventLoopGroup(group)
        .executor(executor)
        .usePlaintext()
        .maxInboundMessageSize(ExternalHandlers.MAX_MESSAGE_BYTES)
        .maxInboundMetadataSize(RegistrationSocket.MAX_REGISTRATION_BYTES)
        // A handler that stops answering (process frozen, host gone) is noticed by its HTTP/2
        // stack not answering PINGs; only while a Discover stream is open, so an unused
        // handler is never pinged (servers that police PINGs are strictest without calls).
        .keepAliveTime(settings.keepalive().toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveTimeout(settings.keepaliveTimeout().toNanos(), TimeUnit.NANOSECONDS)
        .keepAliveWithoutCalls(false);
    InternalNettyChannelBuilder.setStatsEnabled(builder, false);
    InternalNettyChannelBuilder.setTracingEnabled(builder, false);
    return builder.build();
  }
}
