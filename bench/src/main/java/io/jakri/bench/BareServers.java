package io.jakri.bench;

import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyServerBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.DevicePluginGrpc;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.io.IOException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.FileAttribute;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The floor of the scale figures: the least a JVM program must do to advertise N resources — start
 * N bare device-plugin gRPC servers on Unix sockets (one shared {@code EpollEventLoopGroup(2)}, one
 * 8-thread executor, like the agent), each answering GetDevicePluginOptions and ListAndWatch with
 * one healthy device, and register each with the kubelet (asynchronously, over one channel). The
 * servers are started 8 at a time (gRPC's {@code start()} blocks until the event loop has bound the
 * socket), the fastest plain way, so the floor is not slower than the agent for want of it. When
 * {@code kubelet.sock} is created again (a kubelet restart) it serves and registers every resource
 * again. No discovery, no Instances, no logging. Usage: {@code BareServers <device-plugin-dir> N
 * [<files-dir>]}: with a files dir it also writes one small owner-only file per server there (as
 * the agent writes a CDI spec per Instance). Runs until killed; on SIGTERM it shuts down the least
 * way it can (the floor of the agent's SIGTERM-to-exit): the files are removed on a thread of their
 * own while every server is stopped at once ({@code shutdownNow}), then the socket files are
 * removed and the event loop group is closed once.
 */
public final class BareServers {

  private static final FileAttribute<?> OWNER_ONLY =
      PosixFilePermissions.asFileAttribute(PosixFilePermissions.fromString("rw-------"));

  private BareServers() {}

  @SuppressWarnings("deprecation")
  public static void main(String[] args) throws Exception {
    Path dir = Path.of(args[0]);
    int n = Integer.parseInt(args[1]);
    Optional<Path> filesDir = args.length > 2 ? Optional.of(Path.of(args[2])) : Optional.empty();
    List<Path> files = new ArrayList<>();
    if (filesDir.isPresent()) {
      Files.createDirectories(filesDir.get());
      byte[] content = new byte[600]; // about the size of a simulated device's CDI spec
      Arrays.fill(content, (byte) ' ');
      for (int i = 0; i < n; i++) {
        Path file = filesDir.get().resolve("bare-" + i + ".json");
        Files.write(Files.createFile(file, OWNER_ONLY), content);
        files.add(file);
      }
    }
    EventLoopGroup group = new EpollEventLoopGroup(2);
    ExecutorService executor = Executors.newFixedThreadPool(8);
    WatchService watcher = FileSystems.getDefault().newWatchService();
    dir.register(watcher, StandardWatchEventKinds.ENTRY_CREATE);
    AtomicReference<Served> current = new AtomicReference<>();
    Runtime.getRuntime()
        .addShutdownHook(new Thread(() -> shutDown(current.get(), files, group, executor)));
    Served served = serveAndRegister(dir, n, group, executor, new Served(new ArrayList<>(), null));
    current.set(served);
    while (true) {
      WatchKey key = watcher.take();
      boolean kubelet = false;
      for (WatchEvent<?> event : key.pollEvents()) {
        kubelet |= "kubelet.sock".equals(String.valueOf(event.context()));
      }
      key.reset();
      if (kubelet) {
        served = serveAndRegister(dir, n, group, executor, served);
        current.set(served);
      }
    }
  }

  /** SIGTERM: files away beside the servers' stop, every server at once, sockets, group once. */
  private static void shutDown(
      Served served, List<Path> files, EventLoopGroup group, ExecutorService executor) {
    long began = System.nanoTime();
    long cpuBefore = processCpuNanos();
    Thread removal =
        new Thread(
            () -> {
              for (Path file : files) {
                deleteQuietly(file);
              }
            });
    removal.start();
    if (served != null) {
      List<Server> servers = List.copyOf(served.servers());
      List<Path> sockets = new ArrayList<>();
      for (Server server : servers) { // known only until a server has terminated
        server.getListenSockets().stream()
            .filter(DomainSocketAddress.class::isInstance)
            .forEach(a -> sockets.add(Path.of(((DomainSocketAddress) a).path())));
      }
      if (served.kubelet() != null) {
        served.kubelet().shutdownNow();
      }
      // As the agent: 64 threads stop the servers side by side (each stop waits for the event loop
      // to close its listening socket), connections closed at once.
      AtomicInteger next = new AtomicInteger();
      List<Thread> stoppers = new ArrayList<>();
      for (int t = 0; t < Math.min(64, servers.size()); t++) {
        Thread thread =
            new Thread(
                () -> {
                  for (int i = next.getAndIncrement(); i < servers.size(); ) {
                    Server server = servers.get(i);
                    server.shutdownNow();
                    try {
                      server.awaitTermination(1, TimeUnit.SECONDS);
                    } catch (InterruptedException e) {
                      Thread.currentThread().interrupt();
                    }
                    i = next.getAndIncrement();
                  }
                });
        thread.start();
        stoppers.add(thread);
      }
      for (Thread thread : stoppers) {
        try {
          thread.join(TimeUnit.SECONDS.toMillis(30));
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      sockets.forEach(BareServers::deleteQuietly);
    }
    executor.shutdownNow();
    group.shutdownGracefully(0, 0, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
    try {
      removal.join(TimeUnit.SECONDS.toMillis(30));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    System.err.printf(
        "stopped in %d ms (%d ms CPU)%n",
        (System.nanoTime() - began) / 1_000_000, (processCpuNanos() - cpuBefore) / 1_000_000);
  }

  private static long processCpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean)
            java.lang.management.ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void deleteQuietly(Path file) {
    try {
      Files.deleteIfExists(file);
    } catch (IOException e) {
      System.err.println("cannot remove " + file + ": " + e);
    }
  }

  /** The servers of one kubelet generation and the channel they registered over. */
  private record Served(List<Server> servers, ManagedChannel kubelet) {}

  private static Served serveAndRegister(
      Path dir, int n, EventLoopGroup group, ExecutorService executor, Served old)
      throws Exception {
    old.servers().forEach(Server::shutdownNow);
    if (old.kubelet() != null) {
      old.kubelet().shutdownNow();
    }
    ManagedChannel kubelet =
        NettyChannelBuilder.forAddress(
                new DomainSocketAddress(dir.resolve("kubelet.sock").toString()))
            .channelType(EpollDomainSocketChannel.class)
            .eventLoopGroup(group)
            .executor(executor)
            .usePlaintext()
            .build();
    RegistrationGrpc.RegistrationStub registration = RegistrationGrpc.newStub(kubelet);
    long stamp = System.currentTimeMillis() / 1000;
    List<Server> servers = java.util.Collections.synchronizedList(new ArrayList<>(n));
    ExecutorService starters = Executors.newFixedThreadPool(8);
    for (int index = 0; index < n; index++) {
      int i = index;
      starters.execute(
          () -> startAndRegister(dir, i, stamp, group, executor, registration, servers));
    }
    starters.shutdown();
    starters.awaitTermination(10, java.util.concurrent.TimeUnit.MINUTES);
    return new Served(servers, kubelet);
  }

  private static void startAndRegister(
      Path dir,
      int i,
      long stamp,
      EventLoopGroup group,
      ExecutorService executor,
      RegistrationGrpc.RegistrationStub registration,
      List<Server> servers) {
    String endpoint = "bare-" + i + "-" + stamp + ".sock";
    try {
      NettyServerBuilder builder =
          NettyServerBuilder.forAddress(new DomainSocketAddress(dir.resolve(endpoint).toString()))
              .channelType(EpollServerDomainSocketChannel.class)
              .bossEventLoopGroup(group)
              .workerEventLoopGroup(group)
              .executor(executor)
              .addService(new Plugin("bare-" + i));
      // As the agent's servers: no census class lookups (ClassNotFoundExceptions) per server.
      InternalNettyServerBuilder.setStatsEnabled(builder, false);
      InternalNettyServerBuilder.setTracingEnabled(builder, false);
      Server server = builder.build().start();
      servers.add(server);
    } catch (java.io.IOException e) {
      System.err.println("cannot serve " + endpoint + ": " + e);
      return;
    }
    {
      registration.register(
          RegisterRequest.newBuilder()
              .setVersion("v1beta1")
              .setEndpoint(endpoint)
              .setResourceName("bench.jakri.io/bare-" + i)
              .build(),
          new StreamObserver<>() {
            @Override
            public void onNext(Empty value) {}

            @Override
            public void onError(Throwable t) {
              System.err.println("register " + endpoint + " failed: " + t);
            }

            @Override
            public void onCompleted() {}
          });
    }
  }

  private static final class Plugin extends DevicePluginGrpc.DevicePluginImplBase {
    private final ListAndWatchResponse devices;

    Plugin(String id) {
      devices =
          ListAndWatchResponse.newBuilder()
              .addDevices(Device.newBuilder().setID(id).setHealth("Healthy"))
              .build();
    }

    @Override
    public void getDevicePluginOptions(Empty request, StreamObserver<DevicePluginOptions> out) {
      out.onNext(DevicePluginOptions.getDefaultInstance());
      out.onCompleted();
    }

    @Override
    public void listAndWatch(Empty request, StreamObserver<ListAndWatchResponse> out) {
      out.onNext(devices); // the stream stays open, like a real plugin's
    }
  }
}
