package io.jakri.kubelet.emulator;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ServerCallStreamObserver;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.AllocateResponse;
import io.jakri.kubelet.v1beta1.CDIDevice;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationResponse;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import io.jakri.kubelet.v1beta1.DeviceSpec;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.kubelet.v1beta1.Mount;
import io.jakri.kubelet.v1beta1.PreStartContainerRequest;
import io.jakri.kubelet.v1beta1.PreStartContainerResponse;
import io.jakri.kubelet.v1beta1.PreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationResponse;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A device plugin for tests: a real gRPC server on a Unix socket that records every call and
 * answers in a predictable way (Allocate: env {@code DEVICES=<ids joined by ,>}, one mount, one
 * device node and one CDI device per id).
 */
final class FakeDevicePlugin extends DevicePluginGrpc.DevicePluginImplBase
    implements AutoCloseable {
  static final String REGISTER_RETURNED = "Register returned";

  final Path socket;
  final String resource;
  final DevicePluginOptions options;
  private final EventLoopGroup group;
  private final Server server;

  /** Method names in call order, plus {@link #REGISTER_RETURNED} when our Register returns. */
  final List<String> calls = new CopyOnWriteArrayList<>();

  /** For each GetDevicePluginOptions call: whether our Register call was still outstanding. */
  final List<Boolean> optionsCalledDuringRegister = new CopyOnWriteArrayList<>();

  final List<AllocateRequest> allocateRequests = new CopyOnWriteArrayList<>();
  final List<PreferredAllocationRequest> preferredRequests = new CopyOnWriteArrayList<>();
  final List<PreStartContainerRequest> preStartRequests = new CopyOnWriteArrayList<>();

  private final List<ServerCallStreamObserver<ListAndWatchResponse>> streams =
      new CopyOnWriteArrayList<>();
  private final AtomicBoolean registerOutstanding = new AtomicBoolean();
  private List<Device> devices = List.of(); // guarded by this
  volatile Optional<Status> allocateFailure = Optional.empty();
  volatile Optional<Status> optionsFailure = Optional.empty();
  volatile List<String> preferredAnswer = List.of();

  private FakeDevicePlugin(
      Path socket, String resource, DevicePluginOptions options, EventLoopGroup group)
      throws IOException {
    this.socket = socket;
    this.resource = resource;
    this.options = options;
    this.group = group;
    this.server =
        NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
            .channelType(EpollServerDomainSocketChannel.class)
            .bossEventLoopGroup(group)
            .workerEventLoopGroup(group)
            .addService(this)
            .build()
            .start();
  }

  static FakeDevicePlugin serve(
      Path socket,
      String resource,
      DevicePluginOptions options,
      EventLoopGroup group,
      Device... devices)
      throws IOException {
    FakeDevicePlugin plugin = new FakeDevicePlugin(socket, resource, options, group);
    plugin.setDevices(devices);
    return plugin;
  }

  static Device healthy(String id) {
    return Device.newBuilder().setID(id).setHealth("Healthy").build();
  }

  static Device unhealthy(String id) {
    return Device.newBuilder().setID(id).setHealth("Unhealthy").build();
  }

  static Device withHealth(String id, String health) {
    return Device.newBuilder().setID(id).setHealth(health).build();
  }

  static DevicePluginOptions options(boolean preStart, boolean preferred) {
    return DevicePluginOptions.newBuilder()
        .setPreStartRequired(preStart)
        .setGetPreferredAllocationAvailable(preferred)
        .build();
  }

  /** Calls Register on the kubelet socket with API version v1beta1; blocks until answered. */
  void register(Path kubeletSocket) {
    register(kubeletSocket, resource, KubeletEmulator.API_VERSION);
  }

  /** Calls Register with the given resource name and version; blocks until answered. */
  void register(Path kubeletSocket, String resourceName, String version) {
    ManagedChannel channel =
        NettyChannelBuilder.forAddress(new DomainSocketAddress(kubeletSocket.toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .usePlaintext()
            .build();
    registerOutstanding.set(true);
    try {
      RegistrationGrpc.newBlockingStub(channel)
          .withDeadlineAfter(20, TimeUnit.SECONDS)
          .register(
              RegisterRequest.newBuilder()
                  .setVersion(version)
                  .setEndpoint(socket.getFileName().toString())
                  .setResourceName(resourceName)
                  .setOptions(options)
                  .build());
      calls.add(REGISTER_RETURNED);
    } finally {
      registerOutstanding.set(false);
      channel.shutdownNow();
    }
  }

  /** Sends a new full snapshot on every open ListAndWatch stream. */
  synchronized void setDevices(Device... newDevices) {
    devices = List.of(newDevices);
    for (ServerCallStreamObserver<ListAndWatchResponse> s : streams) {
      send(s);
    }
  }

  /** Ends every open ListAndWatch stream, as a plugin that stops does. */
  synchronized void endStreams() {
    for (ServerCallStreamObserver<ListAndWatchResponse> s : streams) {
      try {
        s.onCompleted();
      } catch (RuntimeException e) {
        // already cancelled by the kubelet side
      }
    }
    streams.clear();
  }

  int openStreams() {
    return (int) streams.stream().filter(s -> !s.isCancelled()).count();
  }

  long callsOf(String method) {
    return calls.stream().filter(method::equals).count();
  }

  @Override
  public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> response) {
    calls.add("GetDevicePluginOptions");
    optionsCalledDuringRegister.add(registerOutstanding.get());
    if (optionsFailure.isPresent()) {
      response.onError(optionsFailure.get().asRuntimeException());
      return;
    }
    response.onNext(options);
    response.onCompleted();
  }

  @Override
  public synchronized void listAndWatch(
      Empty request, StreamObserver<ListAndWatchResponse> response) {
    calls.add("ListAndWatch");
    ServerCallStreamObserver<ListAndWatchResponse> stream =
        (ServerCallStreamObserver<ListAndWatchResponse>) response;
    stream.setOnCancelHandler(() -> streams.remove(stream));
    streams.add(stream);
    send(stream);
  }

  private void send(ServerCallStreamObserver<ListAndWatchResponse> stream) {
    try {
      stream.onNext(ListAndWatchResponse.newBuilder().addAllDevices(devices).build());
    } catch (RuntimeException e) {
      streams.remove(stream);
    }
  }

  @Override
  public void getPreferredAllocation(
      PreferredAllocationRequest request, StreamObserver<PreferredAllocationResponse> response) {
    calls.add("GetPreferredAllocation");
    preferredRequests.add(request);
    response.onNext(
        PreferredAllocationResponse.newBuilder()
            .addContainerResponses(
                ContainerPreferredAllocationResponse.newBuilder().addAllDeviceIDs(preferredAnswer))
            .build());
    response.onCompleted();
  }

  @Override
  public void allocate(AllocateRequest request, StreamObserver<AllocateResponse> response) {
    calls.add("Allocate");
    allocateRequests.add(request);
    if (allocateFailure.isPresent()) {
      response.onError(allocateFailure.get().asRuntimeException());
      return;
    }
    AllocateResponse.Builder out = AllocateResponse.newBuilder();
    for (ContainerAllocateRequest c : request.getContainerRequestsList()) {
      ContainerAllocateResponse.Builder r = ContainerAllocateResponse.newBuilder();
      r.putEnvs("DEVICES", String.join(",", c.getDevicesIdsList()));
      r.putAnnotations("fake/" + resource, String.join(",", c.getDevicesIdsList()));
      for (String id : c.getDevicesIdsList()) {
        r.addMounts(
            Mount.newBuilder()
                .setContainerPath("/run/" + id)
                .setHostPath("/srv/" + id)
                .setReadOnly(true));
        r.addDevices(
            DeviceSpec.newBuilder()
                .setContainerPath("/dev/" + id)
                .setHostPath("/dev/" + id)
                .setPermissions("rw"));
        r.addCdiDevices(CDIDevice.newBuilder().setName("fake.example/device=" + id));
      }
      out.addContainerResponses(r);
    }
    response.onNext(out.build());
    response.onCompleted();
  }

  @Override
  public void preStartContainer(
      PreStartContainerRequest request, StreamObserver<PreStartContainerResponse> response) {
    calls.add("PreStartContainer");
    preStartRequests.add(request);
    response.onNext(PreStartContainerResponse.getDefaultInstance());
    response.onCompleted();
  }

  @Override
  public void close() {
    server.shutdownNow();
    try {
      server.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
