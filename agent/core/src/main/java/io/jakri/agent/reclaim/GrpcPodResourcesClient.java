package io.jakri.agent.reclaim;

import io.grpc.ManagedChannel;
import io.grpc.StatusRuntimeException;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.kubelet.podresources.v1.ContainerDevices;
import io.jakri.kubelet.podresources.v1.ContainerResources;
import io.jakri.kubelet.podresources.v1.ListPodResourcesRequest;
import io.jakri.kubelet.podresources.v1.ListPodResourcesResponse;
import io.jakri.kubelet.podresources.v1.PodResources;
import io.jakri.kubelet.podresources.v1.PodResourcesListerGrpc;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * {@link PodResourcesClient} over the kubelet's PodResources v1 socket ({@code
 * /var/lib/kubelet/pod-resources/kubelet.sock}, {@code PodResourcesLister.List}). One channel,
 * created at construction (connecting lazily), on the agent's shared Netty event loop group; every
 * call has a deadline. The channel redials by itself when the kubelet comes back (a kubelet restart
 * recreates the socket); after a failed call the connect backoff is reset so that the next call
 * tries at once instead of waiting out gRPC's exponential backoff. Thread-safe.
 */
public final class GrpcPodResourcesClient implements PodResourcesClient {

  /** The deadline of one List call. */
  public static final Duration DEFAULT_DEADLINE = Duration.ofSeconds(5);

  private final Path socket;
  private final Duration deadline;
  private final ManagedChannel channel;
  private final PodResourcesListerGrpc.PodResourcesListerBlockingStub stub;

  /**
   * @param socket the kubelet's PodResources socket
   * @param group the agent's shared Netty group (not shut down by {@link #close()})
   * @param executor runs gRPC callbacks (not shut down by {@link #close()})
   * @param deadline how long one List call may take
   */
  public GrpcPodResourcesClient(
      Path socket, EventLoopGroup group, Executor executor, Duration deadline) {
    this.socket = socket;
    this.deadline = deadline;
    this.channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .executor(executor)
            .usePlaintext()
            .build();
    this.stub = PodResourcesListerGrpc.newBlockingStub(channel);
  }

  /**
   * One line for a failed call: the code, the description and the root cause's message (gRPC's own
   * {@code Status.toString()} embeds the cause's whole stack trace).
   */
  static String describe(io.grpc.Status status) {
    StringBuilder text = new StringBuilder(status.getCode().name());
    if (status.getDescription() != null) {
      text.append(": ").append(status.getDescription());
    }
    Throwable root = status.getCause();
    while (root != null && root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    if (root != null && root.getMessage() != null) {
      text.append(" (").append(root.getMessage()).append(')');
    }
    return text.toString().replaceAll("[\\r\\n]+", " ");
  }

  @Override
  public Set<DeviceInUse> devicesInUse() throws PodResourcesException {
    ListPodResourcesResponse response;
    try {
      response =
          stub.withDeadlineAfter(deadline.toMillis(), TimeUnit.MILLISECONDS)
              .list(ListPodResourcesRequest.getDefaultInstance());
    } catch (StatusRuntimeException e) {
      // Without this the channel may sit in backoff (up to 2 min) after the kubelet is back.
      channel.resetConnectBackoff();
      throw new PodResourcesException(
          "PodResources List on " + socket + " failed: " + describe(e.getStatus()), e);
    }
    Set<DeviceInUse> devices = new HashSet<>();
    for (PodResources pod : response.getPodResourcesList()) {
      for (ContainerResources container : pod.getContainersList()) {
        for (ContainerDevices d : container.getDevicesList()) {
          for (String id : d.getDeviceIdsList()) {
            devices.add(new DeviceInUse(d.getResourceName(), id));
          }
        }
      }
    }
    return devices;
  }

  /** Shuts the channel down, waiting briefly for a call in flight. Idempotent. */
  @Override
  public void close() {
    channel.shutdownNow();
    try {
      channel.awaitTermination(2, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
