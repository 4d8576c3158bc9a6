package io.jakri.agent.deviceplugin;

import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.AllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationResponse;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.kubelet.v1beta1.PreStartContainerRequest;
import io.jakri.kubelet.v1beta1.PreStartContainerResponse;
import io.jakri.kubelet.v1beta1.PreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationResponse;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One kubelet device-plugin gRPC server on one Unix socket, serving one resource. ListAndWatch
 * streams get the current snapshot at once and a new one whenever {@link #publish()} finds the
 * devices changed (pushed, never polled). A stream whose kubelet has not yet taken in what was sent
 * (gRPC flow control: not ready) is sent nothing meanwhile; when it is ready again it gets the then
 * current snapshot, if that differs from the last one it got. So a slow kubelet receives the latest
 * state, never a backlog of stale snapshots (a class resource with thousands of devices changing
 * every few milliseconds would otherwise queue megabytes the kubelet parses and checkpoints one by
 * one). Thread-safe; sending is serialised per server.
 */
final class ResourceServer {

  private static final Logger LOG = LoggerFactory.getLogger(ResourceServer.class);

  /** What the kubelet is told about optional RPCs. */
  static final DevicePluginOptions OPTIONS =
      DevicePluginOptions.newBuilder()
          .setPreStartRequired(false)
          .setGetPreferredAllocationAvailable(true)
          .build();

  private static final Set<PosixFilePermission> OWNER_ONLY =
      PosixFilePermissions.fromString("rw-------");

  private final ResourceBackend backend;
  private final Path socket;
  private final Server server;
  private final Set<Watch> streams = ConcurrentHashMap.newKeySet();
  private final Object publishLock = new Object();
  private final java.util.function.Consumer<DevicePluginEvent> events;
  private final Limits limits;
  private final AtomicBoolean refusedStreams = new AtomicBoolean();
  private volatile Optional<Object> boundFile = Optional.empty();

  /**
   * @param events told about Allocate outcomes and snapshots sent (metrics); must not block
   */
  ResourceServer(
      ResourceBackend backend,
      Path socket,
      EventLoopGroup group,
      Executor executor,
      java.util.function.Consumer<DevicePluginEvent> events) {
    this(backend, socket, group, executor, events, Limits.DEFAULT);
  }

  /**
   * What one local client may hold of a server. The kubelet keeps one connection with one
   * ListAndWatch stream per plugin and makes a few unary calls on it, so these only bind a client
   * that is not the kubelet: a connection with no call for {@code connectionIdle} is closed, at
   * most {@code callsPerConnection} calls run on one connection, ListAndWatch streams beyond {@code
   * maxStreams} are refused, and a connection that has not finished its HTTP/2 handshake after
   * {@code handshake} is dropped.
   */
  record Limits(
      int maxStreams, int callsPerConnection, Duration connectionIdle, Duration handshake) {
    static final Limits DEFAULT = new Limits(8, 32, Duration.ofMinutes(5), Duration.ofSeconds(10));
  }

  ResourceServer(
      ResourceBackend backend,
      Path socket,
      EventLoopGroup group,
      Executor executor,
      java.util.function.Consumer<DevicePluginEvent> events,
      Limits limits) {
    this.backend = backend;
    this.socket = socket;
    this.events = events;
    this.limits = limits;
    NettyServerBuilder builder =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .maxConnectionIdle(limits.connectionIdle().toMillis(), TimeUnit.MILLISECONDS)
            .maxConcurrentCallsPerConnection(limits.callsPerConnection())
            .handshakeTimeout(limits.handshake().toMillis(), TimeUnit.MILLISECONDS)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .executor(executor)
            .addService(new Service());
    // Without grpc-census on the class path, each builder with census on looks its classes up in
    // vain (two ClassNotFoundExceptions per server, measured with JFR); there is nothing to record.
    InternalNettyServerBuilder.setStatsEnabled(builder, false);
    InternalNettyServerBuilder.setTracingEnabled(builder, false);
    this.server = builder.build();
  }

  Path socket() {
    return socket;
  }

  String endpoint() {
    return socket.getFileName().toString();
  }

  ResourceBackend backend() {
    return backend;
  }

  void start() throws IOException {
    server.start();
    try {
      // Only the socket's owner (the agent's user; the kubelet runs as root) may connect.
      Files.setPosixFilePermissions(socket, OWNER_ONLY);
    } catch (IOException | UnsupportedOperationException e) {
      LOG.warn(
          "resource {}: could not make {} owner-only: {}",
          backend.resourceName(),
          socket,
          e.toString());
    }
    boundFile = SocketFiles.key(socket, LinkOption.NOFOLLOW_LINKS);
    LOG.debug("resource {}: serving on {}", backend.resourceName(), socket);
  }

  /**
   * Ends every ListAndWatch stream and begins shutting down, without waiting; {@link #stop()}
   * finishes. Idempotent.
   */
  void beginStop() {
    synchronized (publishLock) { // never while a snapshot is being sent on a stream
      for (Watch watch : streams) {
        try {
          watch.out.onCompleted();
        } catch (RuntimeException e) {
          LOG.debug("resource {}: stream already closed", backend.resourceName());
        }
      }
      streams.clear();
    }
    server.shutdown();
  }

  /** Ends every ListAndWatch stream, stops serving and removes the socket file. Idempotent. */
  void stop() {
    stop(false);
  }

  /**
   * As {@link #stop()}; with {@code atOnce} (the agent is shutting down) the connections are closed
   * at once instead of waiting up to 2 s for the kubelet to close them: thousands of servers stop
   * in milliseconds each, not in the sum of the kubelet's reaction times.
   */
  void stop(boolean atOnce) {
    beginStop();
    try {
      if (atOnce) {
        server.shutdownNow();
        server.awaitTermination(1, TimeUnit.SECONDS);
      } else if (!server.awaitTermination(2, TimeUnit.SECONDS)) {
        server.shutdownNow();
      }
    } catch (InterruptedException e) {
      server.shutdownNow();
      Thread.currentThread().interrupt();
    }
    try {
      // Only our own socket file: after a kubelet restart removed it, a replacement server may
      // already serve on a file of the same name.
      Optional<Object> now = SocketFiles.key(socket, LinkOption.NOFOLLOW_LINKS);
      if (now.isPresent() && now.equals(boundFile)) {
        Files.deleteIfExists(socket);
      }
    } catch (IOException e) {
      LOG.warn(
          "resource {}: could not remove {}: {}", backend.resourceName(), socket, e.toString());
    }
  }

  /**
   * Recomputes the devices and pushes them to every ready stream that has not got them yet; a
   * stream not ready gets them when it is.
   */
  void publish() {
    boolean changed = false;
    boolean current;
    synchronized (publishLock) {
      Optional<ListAndWatchResponse> next = Optional.empty();
      for (Watch watch : streams) {
        if (!watch.out.isReady()) {
          watch.behind = true;
          continue;
        }
        if (next.isEmpty()) {
          next = Optional.of(snapshot());
        }
        watch.behind = false;
        changed |= send(watch, next.get());
      }
      current = allCurrent();
    }
    if (current) {
      events.accept(new DevicePluginEvent.Advertised(backend.resourceName(), changed));
    }
  }

  /** Whether streams are open and none is behind. Holds publishLock. */
  private boolean allCurrent() {
    return !streams.isEmpty() && streams.stream().noneMatch(w -> w.behind);
  }

  /** gRPC executor: the stream can take more; sends it what it missed meanwhile. */
  private void caughtUp(Watch watch) {
    boolean advertised = false;
    synchronized (publishLock) {
      if (watch.behind && watch.out.isReady() && streams.contains(watch)) {
        watch.behind = false;
        advertised = send(watch, snapshot()) && allCurrent();
      }
    }
    if (advertised) {
      events.accept(new DevicePluginEvent.Advertised(backend.resourceName(), true));
    }
  }

  private ListAndWatchResponse snapshot() {
    return ListAndWatchResponse.newBuilder().addAllDevices(backend.devices()).build();
  }

  /**
   * Sends {@code response} unless the stream got exactly that last; says whether it sent it. Holds
   * publishLock.
   */
  private boolean send(Watch watch, ListAndWatchResponse response) {
    if (response.equals(watch.sent)) {
      return false;
    }
    try {
      if (!watch.out.isCancelled()) {
        watch.out.onNext(response);
        watch.sent = response;
        return true;
      }
    } catch (RuntimeException e) {
      streams.remove(watch);
      LOG.debug("resource {}: dropped a broken stream: {}", backend.resourceName(), e.toString());
    }
    return false;
  }

  /** One ListAndWatch stream; mutable fields guarded by publishLock. */
  private static final class Watch {
    final ServerCallStreamObserver<ListAndWatchResponse> out;
    ListAndWatchResponse sent;
    boolean behind;

    Watch(ServerCallStreamObserver<ListAndWatchResponse> out) {
      this.out = out;
    }
  }

  private final class Service extends DevicePluginGrpc.DevicePluginImplBase {

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      out.onNext(OPTIONS);
      out.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      ServerCallStreamObserver<ListAndWatchResponse> stream =
          (ServerCallStreamObserver<ListAndWatchResponse>) out;
      Watch watch = new Watch(stream);
      stream.setOnCancelHandler(() -> streams.remove(watch));
      stream.setOnReadyHandler(() -> caughtUp(watch));
      boolean current;
      synchronized (publishLock) {
        if (streams.size() >= limits.maxStreams()) {
          if (!refusedStreams.getAndSet(true)) {
            LOG.warn(
                "resource {}: refused a ListAndWatch stream beyond {} at once (the kubelet needs"
                    + " one; further refusals are not logged)",
                backend.resourceName(),
                limits.maxStreams());
          }
          stream.onError(
              Status.RESOURCE_EXHAUSTED
                  .withDescription(
                      "more than " + limits.maxStreams() + " ListAndWatch streams at once")
                  .asException());
          return;
        }
        streams.add(watch);
        send(watch, snapshot()); // the first snapshot at once, ready or not
        current = allCurrent();
      }
      if (current) {
        events.accept(new DevicePluginEvent.Advertised(backend.resourceName(), true));
      }
    }

    @Override
    public void getPreferredAllocation(
        PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> out) {
      PreferredAllocationResponse.Builder response = PreferredAllocationResponse.newBuilder();
      for (ContainerPreferredAllocationRequest container : request.getContainerRequestsList()) {
        List<String> chosen =
            backend.preferredAllocation(
                container.getAvailableDeviceIDsList(),
                container.getMustIncludeDeviceIDsList(),
                container.getAllocationSize());
        response.addContainerResponses(
            ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(chosen));
      }
      out.onNext(response.build());
      out.onCompleted();
    }

    @Override
    public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      long start = System.nanoTime();
      AllocateOutcome outcome = claim(request, out);
      events.accept(
          new DevicePluginEvent.Allocated(
              backend.resourceName(), outcome, Duration.ofNanos(System.nanoTime() - start)));
      if (outcome instanceof AllocateOutcome.Granted) {
        publish();
      }
    }

    /** Claims every container's devices and answers the kubelet; says how it ended. */
    private AllocateOutcome claim(AllocateRequest request, StreamObserver<AllocateResponse> out) {
      AllocateResponse.Builder response = AllocateResponse.newBuilder();
      List<String> granted = new ArrayList<>();
      try {
        for (ContainerAllocateRequest container : request.getContainerRequestsList()) {
          response.addContainerResponses(backend.allocate(container.getDevicesIdsList()));
          granted.addAll(container.getDevicesIdsList());
        }
      } catch (AllocationException e) {
        LOG.warn(
            "resource {}: Allocate {} refused: {}",
            backend.resourceName(),
            request.getContainerRequestsList().stream()
                .flatMap(c -> c.getDevicesIdsList().stream())
                .toList(),
            e.getMessage());
        out.onError(Status.FAILED_PRECONDITION.withDescription(e.getMessage()).asException());
        return new AllocateOutcome.Refused(e.reason());
      } catch (RuntimeException e) {
        LOG.error("resource {}: Allocate failed", backend.resourceName(), e);
        out.onError(Status.INTERNAL.withDescription(String.valueOf(e)).asException());
        return new AllocateOutcome.Failed();
      }
      LOG.info("resource {}: allocated {}", backend.resourceName(), granted);
      out.onNext(response.build());
      out.onCompleted();
      return new AllocateOutcome.Granted();
    }

    @Override
    public void preStartContainer(
        PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> out) {
      out.onNext(PreStartContainerResponse.getDefaultInstance());
      out.onCompleted();
    }
  }
}
