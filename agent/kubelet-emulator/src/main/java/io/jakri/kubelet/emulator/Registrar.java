package io.jakri.kubelet.emulator;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Registration and endpoints: answers {@code Register} like the kubelet (version and resource name
 * checks with its error texts, then a blocking-style dial of {@code <dir>/<endpoint>} with a
 * timeout and {@code GetDevicePluginOptions} before the answer), installs the endpoint as its
 * resource's current one (closing the one it replaces) and opens its ListAndWatch stream.
 */
final class Registrar {
  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  private final Path dir;
  private final EmulatorDirectory directory;
  private final Duration dialTimeout;
  private final EventLoopGroup group;
  private final EmulatorState state;
  private final DeviceStreams streams;
  private final AtomicLong registrations = new AtomicLong();

  Registrar(
      Path dir,
      EmulatorDirectory directory,
      Duration dialTimeout,
      EventLoopGroup group,
      EmulatorState state,
      DeviceStreams streams) {
    this.dir = dir;
    this.directory = directory;
    this.dialTimeout = dialTimeout;
    this.group = group;
    this.state = state;
    this.streams = streams;
  }

  /** How many Register calls were accepted since construction. */
  long registrations() {
    return registrations.get();
  }

  /** Register handler: validates, then dials and reads options asynchronously before answering. */
  void onRegister(RegisterRequest request, StreamObserver<Empty> response) {
    String resource = request.getResourceName();
    log.info(
        "Registration request for resource {} (version {}, endpoint {})",
        resource,
        request.getVersion(),
        request.getEndpoint());
    if (!KubeletEmulator.API_VERSION.equals(request.getVersion())) {
      reject(
          resource,
          "requested API version "
              + GoErrors.quote(request.getVersion())
              + " is not supported by kubelet. Supported versions are [\""
              + KubeletEmulator.API_VERSION
              + "\"]",
          response);
      return;
    }
    if (!ExtendedResourceNames.isExtendedResourceName(resource)) {
      reject(resource, "the ResourceName " + GoErrors.quote(resource) + " is invalid", response);
      return;
    }
    // The endpoint is relative to the dir (Go's filepath.Join: a leading '/' does not escape it).
    Path socket = Path.of(dir.toString(), request.getEndpoint()).normalize();
    directory.pluginRegistering(socket);
    NettyChannelBuilder builder =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .executor(state.executor)
            .usePlaintext();
    // One channel per plugin: without grpc-census on the class path, a builder with census on
    // looks its classes up in vain each time (ClassNotFoundExceptions, measured with JFR).
    InternalNettyChannelBuilder.setStatsEnabled(builder, false);
    InternalNettyChannelBuilder.setTracingEnabled(builder, false);
    ManagedChannel channel = builder.build();
    PluginEndpoint ep = null;
    synchronized (state.lock) {
      if (state.lifecycle == EmulatorState.Lifecycle.RUNNING) {
        ep = new PluginEndpoint(resource, request.getEndpoint(), state.generation, channel);
        state.connecting.add(ep);
      }
    }
    if (ep == null) {
      channel.shutdownNow();
      reject(resource, "kubelet is shutting down", response);
      return;
    }
    new Connection(ep, response).begin();
  }

  /** One registration in progress: blocking-style dial (with timeout), then options. */
  private final class Connection {
    private final PluginEndpoint ep;
    private final StreamObserver<Empty> response;
    private final AtomicBoolean dialDone = new AtomicBoolean();
    private volatile Optional<ScheduledFuture<?>> timer = Optional.empty();

    Connection(PluginEndpoint ep, StreamObserver<Empty> response) {
      this.ep = ep;
      this.response = response;
    }

    void begin() {
      try {
        timer =
            Optional.of(
                state.executor.schedule(
                    this::dialTimedOut, dialTimeout.toNanos(), TimeUnit.NANOSECONDS));
      } catch (RejectedExecutionException e) {
        dialDone.set(true);
        fail("failed to dial device plugin: context canceled");
        return;
      }
      watch();
    }

    private void watch() {
      if (dialDone.get()) {
        return;
      }
      ConnectivityState connectivity = ep.channel.getState(true);
      if (connectivity == ConnectivityState.READY) {
        connected();
      } else if (connectivity == ConnectivityState.SHUTDOWN) {
        if (dialDone.compareAndSet(false, true)) {
          fail("failed to dial device plugin: context canceled");
        }
      } else {
        // Transient failures are retried with backoff by the channel, like a blocking Go dial.
        ep.channel.notifyWhenStateChanged(connectivity, this::watch);
      }
    }

    private void dialTimedOut() {
      if (dialDone.compareAndSet(false, true)) {
        fail("failed to dial device plugin: context deadline exceeded");
      }
    }

    private void connected() {
      if (!dialDone.compareAndSet(false, true)) {
        return;
      }
      timer.ifPresent(t -> t.cancel(false));
      // The kubelet reads the options (no deadline) before it answers Register.
      ep.async.getDevicePluginOptions(
          Empty.getDefaultInstance(),
          new StreamObserver<>() {
            private DevicePluginOptions options = DevicePluginOptions.getDefaultInstance();

            @Override
            public void onNext(DevicePluginOptions value) {
              options = value;
            }

            @Override
            public void onError(Throwable t) {
              fail("failed to get device plugin options: " + GoErrors.rpcError(t));
            }

            @Override
            public void onCompleted() {
              install(ep, options, response);
            }
          });
    }

    private void fail(String reason) {
      synchronized (state.lock) {
        state.connecting.remove(ep);
      }
      ep.close();
      reject(ep.resource, reason, response);
    }
  }

  private void reject(String resource, String reason, StreamObserver<Empty> response) {
    log.warn("Registration of resource {} rejected: {}", resource, reason);
    synchronized (state.lock) {
      state.enqueue(l -> l.registrationRejected(resource, reason));
    }
    state.fire();
    try {
      response.onError(Status.UNKNOWN.withDescription(reason).asRuntimeException());
    } catch (RuntimeException e) {
      log.debug("Could not answer Register of {}: {}", resource, e.toString());
    }
  }

  private void install(
      PluginEndpoint ep, DevicePluginOptions options, StreamObserver<Empty> response) {
    ep.options(options);
    Optional<PluginEndpoint> replaced = Optional.empty();
    boolean replacedWasLive = false;
    boolean accepted;
    synchronized (state.lock) {
      state.connecting.remove(ep);
      accepted =
          state.lifecycle == EmulatorState.Lifecycle.RUNNING && ep.generation == state.generation;
      if (accepted) {
        ResourceState rs = state.resources.computeIfAbsent(ep.resource, ResourceState::new);
        replaced = rs.endpoint;
        replacedWasLive = rs.live;
        rs.endpoint = Optional.of(ep);
        rs.live = true;
        rs.dropped = false;
        rs.epoch++;
        rs.cancelStaleTimer();
        registrations.incrementAndGet();
        state.enqueue(l -> l.registered(ep.resource, ep.endpoint));
      }
    }
    state.fire();
    if (!accepted) {
      ep.close();
      reject(ep.resource, "kubelet restarted while the plugin was registering", response);
      return;
    }
    if (replaced.isPresent()) {
      if (replacedWasLive) {
        log.warn(
            "Resource {} registered again at {} while the stream of {} was still open: closing the"
                + " old endpoint (a real kubelet may stop the new endpoint when the old stream"
                + " ends; stop the old server before registering again)",
            ep.resource,
            ep.endpoint,
            replaced.get().endpoint);
      } else {
        log.info("Resource {} replaces endpoint {}", ep.resource, replaced.get().endpoint);
      }
      replaced.get().close();
    }
    log.info(
        "Registered resource {} at endpoint {} (preStartRequired={},"
            + " getPreferredAllocationAvailable={})",
        ep.resource,
        ep.endpoint,
        options.getPreStartRequired(),
        options.getGetPreferredAllocationAvailable());
    try {
      response.onNext(Empty.getDefaultInstance());
      response.onCompleted();
    } catch (RuntimeException e) {
      log.debug("Could not answer Register of {}: {}", ep.resource, e.toString());
    }
    streams.open(ep);
  }
}
