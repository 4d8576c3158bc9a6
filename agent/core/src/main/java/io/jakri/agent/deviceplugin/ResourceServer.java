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
import java.net.StandardProtocolFamily;
import java.net.UnixDomainSocketAddress;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.LinkOption;
import java.nio.file.Path;
import java.nio.file.attribute.BasicFileAttributes;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.regex.Pattern;
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
public final class ResourceServer {

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
  private final java.util.function.Consumer<DevicePluginReport> reports;
  private final Limits limits;
  private final AtomicBoolean refusedStreams = new AtomicBoolean();
  private volatile Optional<Object> boundFile = Optional.empty();

  /**
   * @param reports told about Allocate outcomes and snapshots sent (metrics); must not block
   */
  ResourceServer(
      ResourceBackend backend,
      Path socket,
      EventLoopGroup group,
      Executor executor,
      java.util.function.Consumer<DevicePluginReport> reports) {
    this(backend, socket, group, executor, reports, Limits.DEFAULT);
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
      java.util.function.Consumer<DevicePluginReport> reports,
      Limits limits) {
    this.backend = backend;
    this.socket = socket;
    this.reports = reports;
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
      reports.accept(new DevicePluginReport.Advertised(backend.resourceName(), changed));
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
      reports.accept(new DevicePluginReport.Advertised(backend.resourceName(), true));
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
        reports.accept(new DevicePluginReport.Advertised(backend.resourceName(), true));
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
      reports.accept(
          new DevicePluginReport.Allocated(
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

  /**
   * The socket file a resource's server listens on: {@code <stem>-<unix seconds>.sock} in the
   * device-plugin directory, as the kubelet's own plugins name theirs.
   *
   * <p>A Unix socket's path holds at most {@value #MAX_PATH_BYTES} bytes ({@code sun_path} less its
   * terminating NUL). A stem that would make the path longer (a class resource such as {@code
   * example.com/<a long name>}, or a long device-plugin directory) is shortened to as much of its
   * start as fits, followed by {@code -} and {@value #HASH_CHARS} hex characters of its SHA-256, so
   * two long stems sharing a start still get different files. Stems that fit are kept as they are.
   */
  public static final class SocketNames {

    /** The longest path a Unix socket may have on Linux, in bytes. */
    static final int MAX_PATH_BYTES = 107;

    static final int HASH_CHARS = 10;

    /**
     * The shortest socket name {@link #socket} makes: one character of the stem, {@code -}, the
     * hash, {@code -}, ten digits of seconds and {@code .sock}.
     */
    static final int SHORTEST_NAME_BYTES = 1 + 1 + HASH_CHARS + 1 + 10 + ".sock".length();

    /** The longest device-plugin directory in which every resource's socket fits. */
    public static final int MAX_DIR_BYTES = MAX_PATH_BYTES - 1 - SHORTEST_NAME_BYTES;

    private SocketNames() {}

    /**
     * The socket for {@code stem} in {@code dir} at {@code epochSecond}. In a directory so long
     * that not even a shortened name fits, the shortest name (the stem's first character and its
     * hash); binding it then fails with the system's error, logged and retried as any failed start.
     */
    static Path socket(Path dir, String stem, long epochSecond) {
      String suffix = "-" + epochSecond + ".sock";
      int room = MAX_PATH_BYTES - bytes(dir.toString()) - 1 - bytes(suffix);
      if (bytes(stem) <= room) {
        return dir.resolve(stem + suffix);
      }
      String hash = "-" + hash(stem);
      int keep = Math.max(1, room - hash.length());
      return dir.resolve(prefix(stem, keep) + hash + suffix);
    }

    /**
     * Why no socket can be served in {@code dir}, if so: a directory longer than {@value
     * #MAX_DIR_BYTES} bytes leaves no room for even the shortest name, and every bind would fail.
     */
    public static Optional<String> tooLong(Path dir) {
      int length = bytes(dir.toString());
      if (length <= MAX_DIR_BYTES) {
        return Optional.empty();
      }
      return Optional.of(
          "device-plugin directory "
              + dir
              + " is "
              + length
              + " bytes long: no socket in it fits the "
              + MAX_PATH_BYTES
              + " bytes a Unix socket path may have; use a directory of at most "
              + MAX_DIR_BYTES
              + " bytes");
    }

    /** The longest start of {@code s} of at most {@code max} UTF-8 bytes, cut at a character. */
    private static String prefix(String s, int max) {
      int end = 0;
      int used = 0;
      while (end < s.length()) {
        int cp = s.codePointAt(end);
        int size = bytes(new String(Character.toChars(cp)));
        if (used + size > max) {
          break;
        }
        used += size;
        end += Character.charCount(cp);
      }
      return s.substring(0, end);
    }

    private static int bytes(String s) {
      return s.getBytes(StandardCharsets.UTF_8).length;
    }

    private static String hash(String stem) {
      try {
        byte[] digest =
            MessageDigest.getInstance("SHA-256").digest(stem.getBytes(StandardCharsets.UTF_8));
        return HexFormat.of().formatHex(digest).substring(0, HASH_CHARS);
      } catch (NoSuchAlgorithmException e) {
        throw new IllegalStateException("SHA-256 is part of every JDK", e);
      }
    }
  }

  /**
   * Existence and identity of socket files, without exceptions for the common case of a missing
   * file. After a kubelet restart every one of thousands of sockets is missing at once, and on JDK
   * 17 {@link Files#exists} and {@link Files#readAttributes} report a missing file by building two
   * exceptions with their stack traces (measured with JFR: three per served Instance per restart).
   */
  static final class SocketFiles {

    private SocketFiles() {}

    /** Whether the path exists (a stat; no exception when it does not). */
    static boolean exists(Path path) {
      return path.toFile().exists();
    }

    /**
     * The file's identity (device and inode); empty if it does not exist or cannot be read. The
     * creation time stands in where a filesystem has no file key. Links are followed unless {@link
     * LinkOption#NOFOLLOW_LINKS} is given.
     */
    static Optional<Object> key(Path path, LinkOption... options) {
      if (!exists(path)) {
        return Optional.empty(); // also a dangling link: there is no socket to identify
      }
      try {
        BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class, options);
        // The inode alone is not enough: a socket removed and created again at once (a kubelet
        // restart) often gets the same inode number back. Its times tell the new file apart.
        return Optional.of(
            List.of(
                Objects.requireNonNullElse(attrs.fileKey(), ""),
                attrs.creationTime(),
                attrs.lastModifiedTime()));
      } catch (IOException e) {
        return Optional.empty(); // removed since
      }
    }
  }

  /**
   * Removes device-plugin sockets a previous agent left behind (killed without its shutdown): files
   * named like the agent's sockets ({@code <stem>-<unix seconds>.sock}) that nobody listens on any
   * more. A socket that still accepts a connection belongs to a live plugin and is kept, so another
   * device plugin sharing the directory is never disturbed.
   */
  public static final class StaleSockets {

    // Named as when it was a class of its own: its lines keep their logger.
    private static final Logger LOG =
        LoggerFactory.getLogger(ResourceServer.class.getPackageName() + ".StaleSockets");
    private static final Pattern OURS = Pattern.compile("[a-z0-9][-a-z0-9._]*-[0-9]{9,}\\.sock");

    private StaleSockets() {}

    /** Deletes stale agent sockets in {@code dir}; returns the files removed. Never throws. */
    public static List<Path> remove(Path dir) {
      List<Path> removed = new ArrayList<>();
      if (!Files.isDirectory(dir)) {
        return removed;
      }
      try (DirectoryStream<Path> files = Files.newDirectoryStream(dir, "*.sock")) {
        for (Path file : files) {
          String name = file.getFileName().toString();
          if (!OURS.matcher(name).matches() || listening(file)) {
            continue;
          }
          try {
            if (Files.deleteIfExists(file)) {
              removed.add(file);
            }
          } catch (IOException e) {
            LOG.warn("cannot remove stale socket {}: {}", file, e.toString());
          }
        }
      } catch (IOException e) {
        LOG.warn("cannot list {} for stale sockets: {}", dir, e.toString());
      }
      if (!removed.isEmpty()) {
        LOG.info("removed {} stale device-plugin sockets left by an earlier agent", removed.size());
      }
      return removed;
    }

    private static boolean listening(Path socket) {
      try (SocketChannel channel = SocketChannel.open(StandardProtocolFamily.UNIX)) {
        return channel.connect(UnixDomainSocketAddress.of(socket));
      } catch (IOException e) {
        return false;
      }
    }
  }
}
