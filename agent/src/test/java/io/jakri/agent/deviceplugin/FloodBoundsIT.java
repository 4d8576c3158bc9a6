package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.ClientCallStreamObserver;
import io.grpc.stub.ClientResponseObserver;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * What a flood of resources or of device changes may ask of a slow kubelet: a bounded number of
 * registrations at once, and the latest snapshot rather than a backlog.
 */
class FloodBoundsIT {

  static final Duration DEADLINE = Duration.ofSeconds(60);

  @TempDir Path tmp;
  Path dir;
  EventLoopGroup group;
  ExecutorService grpc;
  ScheduledExecutorService timer;

  @BeforeEach
  @SuppressWarnings("deprecation")
  void setUp() throws Exception {
    dir = Files.createDirectories(tmp.resolve("device-plugins"));
    group = new EpollEventLoopGroup(2);
    grpc = Executors.newFixedThreadPool(8);
    timer = Executors.newScheduledThreadPool(1);
  }

  @AfterEach
  void tearDown() throws Exception {
    timer.shutdownNow();
    grpc.shutdownNow();
    group.shutdownGracefully(0, 1, TimeUnit.SECONDS).sync();
  }

  @Test
  void aKubeletThatHoldsRegistrationsIsNeverAskedForMoreThanTheWindowAtOnce() throws Exception {
    int resources = 5 * DevicePluginManager.IN_FLIGHT;
    Queue<StreamObserver<Empty>> held = new ConcurrentLinkedQueue<>();
    Set<String> registered = ConcurrentHashMap.newKeySet();
    AtomicInteger outstanding = new AtomicInteger();
    AtomicInteger most = new AtomicInteger();
    Server kubelet =
        kubelet(
            new RegistrationGrpc.RegistrationImplBase() {
              @Override
              public void register(RegisterRequest request, StreamObserver<Empty> out) {
                most.accumulateAndGet(outstanding.incrementAndGet(), Math::max);
                registered.add(request.getResourceName());
                held.add(out);
              }
            });
    try (DevicePluginManager manager =
        new DevicePluginManager(dir, group, grpc, timer, Clock.systemUTC())) {
      manager.start();
      for (int i = 0; i < resources; i++) {
        manager.serve(new Devices("test.jakri.io/r-" + i, "r-" + i, 1));
      }

      await().atMost(DEADLINE).until(() -> outstanding.get() == DevicePluginManager.IN_FLIGHT);
      // Held for a while, the window stays full and no further registration is sent.
      await()
          .during(Duration.ofMillis(500))
          .atMost(Duration.ofSeconds(5))
          .until(() -> outstanding.get() == DevicePluginManager.IN_FLIGHT);

      // Answered, every resource gets its turn.
      await()
          .atMost(DEADLINE)
          .until(
              () -> {
                for (StreamObserver<Empty> out; (out = held.poll()) != null; ) {
                  outstanding.decrementAndGet();
                  out.onNext(Empty.getDefaultInstance());
                  out.onCompleted();
                }
                return manager.allRegistered();
              });
      assertThat(registered).hasSize(resources);
      assertThat(most.get()).isEqualTo(DevicePluginManager.IN_FLIGHT);
    } finally {
      kubelet.shutdownNow();
    }
  }

  /**
   * Near the process's open-files limit no further server starts (each would fail its bind, and
   * every other file the agent opens with it): the resources wait, the operator is told, and they
   * are served once files are freed. Open files are modelled from the sockets in the directory.
   */
  @Test
  void resourcesWaitForOpenFilesInsteadOfFailingAndAreServedOnceFilesAreFreed() throws Exception {
    int resources = 50;
    int fit = 20;
    long base = 10; // small: the reserve is its minimum
    java.util.concurrent.atomic.AtomicLong limit =
        new java.util.concurrent.atomic.AtomicLong(
            base
                + (long) ServerStartPause.FileHeadroom.FILES_PER_SERVER * fit
                + ServerStartPause.FileHeadroom.MIN_RESERVE);
    DevicePluginManager.OpenFiles files =
        new DevicePluginManager.OpenFiles() {
          @Override
          public java.util.OptionalLong open() {
            try (var listing = Files.list(dir)) {
              long sockets =
                  listing.filter(p -> !p.getFileName().toString().equals("kubelet.sock")).count();
              return java.util.OptionalLong.of(
                  base + ServerStartPause.FileHeadroom.FILES_PER_SERVER * sockets);
            } catch (java.io.IOException e) {
              throw new java.io.UncheckedIOException(e);
            }
          }

          @Override
          public java.util.OptionalLong limit() {
            return java.util.OptionalLong.of(limit.get());
          }
        };
    Set<String> registered = ConcurrentHashMap.newKeySet();
    Server kubelet =
        kubelet(
            new RegistrationGrpc.RegistrationImplBase() {
              @Override
              public void register(RegisterRequest request, StreamObserver<Empty> out) {
                registered.add(request.getResourceName());
                out.onNext(Empty.getDefaultInstance());
                out.onCompleted();
              }
            });
    List<DevicePluginReport.OpenFilesLow> lows = new CopyOnWriteArrayList<>();
    List<DevicePluginReport.RegistrationFailed> failures = new CopyOnWriteArrayList<>();
    try (DevicePluginManager manager =
        new DevicePluginManager(
            dir,
            group,
            grpc,
            timer,
            Clock.systemUTC(),
            event -> {
              if (event instanceof DevicePluginReport.OpenFilesLow low) {
                lows.add(low);
              } else if (event instanceof DevicePluginReport.RegistrationFailed f) {
                failures.add(f);
              }
            },
            files)) {
      manager.start();
      for (int i = 0; i < resources; i++) {
        manager.serve(new Devices("test.jakri.io/r-" + i, "r-" + i, 1));
      }
      await().atMost(DEADLINE).until(() -> registered.size() == fit);
      await()
          .atMost(DEADLINE)
          .until(() -> !lows.isEmpty() && lows.get(lows.size() - 1).waiting() == resources - fit);
      // It stays so while files are short, and nothing is tried (and failed) meanwhile.
      await()
          .during(Duration.ofSeconds(1))
          .atMost(Duration.ofSeconds(5))
          .until(() -> registered.size() == fit);
      assertThat(failures).isEmpty();
      assertThat(lows.get(0).limit()).isEqualTo(limit.get());

      // Two of the waiting ones are no longer wanted; the others are served once files are freed.
      manager.retire("test.jakri.io/r-" + (resources - 1));
      manager.retire("test.jakri.io/r-" + (resources - 2));
      limit.addAndGet((long) ServerStartPause.FileHeadroom.FILES_PER_SERVER * resources);
      await().atMost(DEADLINE).until(() -> registered.size() == resources - 2);
      await().atMost(DEADLINE).until(() -> lows.get(lows.size() - 1).waiting() == 0);
      assertThat(manager.allRegistered()).isTrue();
      assertThat(failures).isEmpty();
    } finally {
      kubelet.shutdownNow();
    }
  }

  @Test
  void aListAndWatchReaderThatFallsBehindGetsTheLatestSnapshotInsteadOfEveryOne() throws Exception {
    // ~200 KB per snapshot: a handful fill the reader's flow-control window.
    Devices backend = new Devices("test.jakri.io/big", "big", 5_000);
    ResourceServer server =
        new ResourceServer(backend, dir.resolve("big-1.sock"), group, grpc, event -> {});
    server.start();
    ManagedChannel channel = channelTo(dir.resolve("big-1.sock"));
    List<ListAndWatchResponse> received = new CopyOnWriteArrayList<>();
    AtomicReference<ClientCallStreamObserver<Empty>> call = new AtomicReference<>();
    try {
      DevicePluginGrpc.newStub(channel)
          .listAndWatch(
              Empty.getDefaultInstance(),
              new ClientResponseObserver<Empty, ListAndWatchResponse>() {
                @Override
                public void beforeStart(ClientCallStreamObserver<Empty> requestStream) {
                  requestStream
                      .disableAutoInboundFlowControl(); // one message at start, then on request
                  call.set(requestStream);
                }

                @Override
                public void onNext(ListAndWatchResponse value) {
                  received.add(value);
                }

                @Override
                public void onError(Throwable t) {}

                @Override
                public void onCompleted() {}
              });
      await().atMost(DEADLINE).until(() -> received.size() == 1);

      int changes = 100;
      for (int i = 1; i <= changes; i++) {
        backend.generation.set(i);
        server.publish();
      }
      // The reader now takes everything there is, as fast as it can.
      await()
          .atMost(DEADLINE)
          .until(
              () -> {
                call.get().request(changes);
                return !received.isEmpty() && generationOf(last(received)) == changes;
              });

      assertThat(received.size()).isLessThan(changes / 2);
      List<Integer> generations = new ArrayList<>();
      received.forEach(r -> generations.add(generationOf(r)));
      assertThat(generations).isSorted().doesNotHaveDuplicates();
    } finally {
      channel.shutdownNow();
      server.stop();
    }
  }

  /** A kubelet socket in {@code dir} answering Register with {@code registration}. */
  private Server kubelet(RegistrationGrpc.RegistrationImplBase registration)
      throws java.io.IOException {
    return NettyServerBuilder.forAddress(
            new DomainSocketAddress(dir.resolve("kubelet.sock").toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(group)
        .workerEventLoopGroup(group)
        .executor(grpc)
        .addService(registration)
        .build()
        .start();
  }

  private static ListAndWatchResponse last(List<ListAndWatchResponse> list) {
    return list.get(list.size() - 1);
  }

  private static int generationOf(ListAndWatchResponse response) {
    String id = response.getDevices(0).getID();
    return Integer.parseInt(id.substring(id.lastIndexOf('g') + 1));
  }

  /** {@code count} healthy devices whose ids carry the current generation. */
  private ManagedChannel channelTo(Path socket) {
    return NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollDomainSocketChannel.class)
        .eventLoopGroup(group)
        .executor(grpc)
        .usePlaintext()
        .build();
  }

  private ResourceServer serving(Devices backend, Path socket, ResourceServer.Limits limits)
      throws java.io.IOException {
    ResourceServer server = new ResourceServer(backend, socket, group, grpc, event -> {}, limits);
    server.start();
    return server;
  }

  /** Keeps what one ListAndWatch stream received and how it ended. */
  private static final class Recorded implements StreamObserver<ListAndWatchResponse> {
    final List<ListAndWatchResponse> received = new CopyOnWriteArrayList<>();
    final AtomicReference<Throwable> error = new AtomicReference<>();

    @Override
    public void onNext(ListAndWatchResponse value) {
      received.add(value);
    }

    @Override
    public void onError(Throwable t) {
      error.set(t);
    }

    @Override
    public void onCompleted() {}
  }

  @Test
  void listAndWatchStreamsBeyondTheLimitAreRefusedWhileTheOthersKeepTheirUpdates()
      throws Exception {
    Devices backend = new Devices("test.jakri.io/few", "few", 2);
    Path socket = dir.resolve("few-1.sock");
    ResourceServer server =
        serving(
            backend,
            socket,
            new ResourceServer.Limits(3, 32, Duration.ofMinutes(5), Duration.ofSeconds(10)));
    ManagedChannel channel = channelTo(socket);
    try {
      List<Recorded> streams = new ArrayList<>();
      for (int i = 0; i < 4; i++) {
        Recorded r = new Recorded();
        streams.add(r);
        DevicePluginGrpc.newStub(channel).listAndWatch(Empty.getDefaultInstance(), r);
        if (i < 3) {
          await().atMost(DEADLINE).until(() -> r.received.size() == 1);
        }
      }
      assertThat(Files.getPosixFilePermissions(socket))
          .as("only the owner may connect")
          .isEqualTo(java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
      Recorded fourth = streams.get(3);
      await().atMost(DEADLINE).until(() -> fourth.error.get() != null);
      assertThat(io.grpc.Status.fromThrowable(fourth.error.get()).getCode())
          .isEqualTo(io.grpc.Status.Code.RESOURCE_EXHAUSTED);
      assertThat(fourth.received).isEmpty();

      backend.generation.set(1);
      server.publish();
      await()
          .atMost(DEADLINE)
          .until(() -> streams.subList(0, 3).stream().allMatch(r -> r.received.size() == 2));
      assertThat(streams.subList(0, 3)).allMatch(r -> r.error.get() == null);
    } finally {
      channel.shutdownNow();
      server.stop();
    }
  }

  @Test
  void aConnectionWithoutCallsIsClosedAfterTheIdleLimitWhileOneWithAStreamIsKept()
      throws Exception {
    Devices backend = new Devices("test.jakri.io/idle", "idle", 1);
    Path socket = dir.resolve("idle-1.sock");
    ResourceServer server =
        serving(
            backend,
            socket,
            new ResourceServer.Limits(8, 32, Duration.ofMillis(500), Duration.ofSeconds(10)));
    ManagedChannel idle = channelTo(socket);
    ManagedChannel watching = channelTo(socket);
    try {
      Recorded stream = new Recorded();
      DevicePluginGrpc.newStub(watching).listAndWatch(Empty.getDefaultInstance(), stream);
      await().atMost(DEADLINE).until(() -> stream.received.size() == 1);
      await().atMost(DEADLINE).until(() -> idle.getState(true) == io.grpc.ConnectivityState.READY);

      // The server's GOAWAY for the idle connection takes the channel back to IDLE.
      await().atMost(DEADLINE).until(() -> idle.getState(false) == io.grpc.ConnectivityState.IDLE);
      await()
          .during(Duration.ofSeconds(2))
          .atMost(Duration.ofSeconds(5))
          .until(
              () ->
                  watching.getState(false) == io.grpc.ConnectivityState.READY
                      && stream.error.get() == null);
    } finally {
      idle.shutdownNow();
      watching.shutdownNow();
      server.stop();
    }
  }

  private static final class Devices implements ResourceBackend {
    final String resource;
    final String stem;
    final int count;
    final AtomicInteger generation = new AtomicInteger();

    Devices(String resource, String stem, int count) {
      this.resource = resource;
      this.stem = stem;
      this.count = count;
    }

    @Override
    public String resourceName() {
      return resource;
    }

    @Override
    public String socketStem() {
      return stem;
    }

    @Override
    public List<Device> devices() {
      int g = generation.get();
      List<Device> devices = new ArrayList<>(count);
      for (int i = 0; i < count; i++) {
        devices.add(
            Device.newBuilder()
                .setID(stem + "-device-" + i + "-with-a-longer-id-g" + g)
                .setHealth("Healthy")
                .build());
      }
      return devices;
    }

    @Override
    public List<String> preferredAllocation(
        List<String> available, List<String> mustInclude, int size) {
      return available.subList(0, size);
    }

    @Override
    public ContainerAllocateResponse allocate(List<String> deviceIds) {
      return ContainerAllocateResponse.getDefaultInstance();
    }
  }
}
