package io.jakri.kubelet.emulator;

import static io.jakri.kubelet.emulator.ResourceState.HEALTHY;
import static io.jakri.kubelet.emulator.ResourceState.UNHEALTHY;

import io.grpc.ConnectivityState;
import io.grpc.ManagedChannel;
import io.grpc.Server;
import io.grpc.Status;
import io.grpc.StatusRuntimeException;
import io.grpc.SynchronizationContext;
import io.grpc.netty.shaded.io.grpc.netty.InternalNettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.grpc.netty.NettyServerBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollServerDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import io.grpc.stub.StreamObserver;
import io.jakri.kubelet.podresources.v1.ContainerDevices;
import io.jakri.kubelet.podresources.v1.ContainerResources;
import io.jakri.kubelet.podresources.v1.ListPodResourcesResponse;
import io.jakri.kubelet.podresources.v1.PodResources;
import io.jakri.kubelet.v1beta1.AllocateRequest;
import io.jakri.kubelet.v1beta1.AllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerAllocateRequest;
import io.jakri.kubelet.v1beta1.ContainerAllocateResponse;
import io.jakri.kubelet.v1beta1.ContainerPreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.Device;
import io.jakri.kubelet.v1beta1.DevicePluginOptions;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.ListAndWatchResponse;
import io.jakri.kubelet.v1beta1.PreStartContainerRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationRequest;
import io.jakri.kubelet.v1beta1.PreferredAllocationResponse;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emulates the kubelet's device manager as described in {@code KUBELET.md}: serves {@code
 * Registration} on {@code <dir>/kubelet.sock} and PodResources {@code List} on its own socket,
 * dials registered plugins, follows their ListAndWatch streams, and admits pods by calling
 * GetPreferredAllocation, Allocate and PreStartContainer like the kubelet does.
 *
 * <p>Differences from a real kubelet are deliberate and few: pods are admitted by {@link
 * #admit(Pod)} instead of coming from the API server; there is no topology manager (devices have no
 * NUMA affinity); a failing PreStartContainer rejects the pod instead of leaving it in
 * CreateContainerConfigError; re-registering a resource closes the previous endpoint, and an old
 * stream ending afterwards never stops the new endpoint (a real kubelet 1.26+ may stop it, so the
 * emulator logs a warning when a plugin re-registers while its previous stream is still open).
 *
 * <p>Threading: every public method may be called from any thread. State is guarded by one lock
 * that is never held during RPCs. Pod admissions are serialised, like the kubelet's pod admission
 * loop. No thread per plugin: I/O runs on the event loop group, callbacks and timers on one small
 * executor owned by the emulator.
 */
public final class KubeletEmulator implements AutoCloseable {
  /** The only device plugin API version the kubelet accepts. */
  public static final String API_VERSION = "v1beta1";

  /** The kubelet's registration socket, in the device plugin dir. */
  public static final String KUBELET_SOCKET = "kubelet.sock";

  /** The PodResources socket's name in the device plugin dir unless another socket is given. */
  public static final String POD_RESOURCES_SOCKET = "pod-resources.sock";

  /** The checkpoint file, kept when sockets are cleaned. */
  public static final String CHECKPOINT_FILE = Checkpoint.FILE_NAME;

  /** How long a resource without a stream keeps its capacity (the kubelet's grace period). */
  public static final Duration DEFAULT_STALE_RESOURCE_TIMEOUT = Duration.ofMinutes(5);

  /** The kubelet's blocking dial timeout for a registering plugin. */
  public static final Duration DEFAULT_DIAL_TIMEOUT = Duration.ofSeconds(10);

  /** The kubelet's PreStartContainer deadline. */
  public static final Duration PRE_START_TIMEOUT = Duration.ofSeconds(30);

  private static final Logger log = LoggerFactory.getLogger(KubeletEmulator.class);

  private enum Lifecycle {
    NEW,
    RUNNING,
    CLOSED
  }

  private final Path dir;
  private final Path podResourcesSocket;
  private final EmulatorDirectory directory;
  private final Duration staleTimeout;
  private final Duration dialTimeout;
  private final boolean writeCheckpoint;
  private final EventLoopGroup group;
  private final boolean ownsGroup;
  private final ScheduledThreadPoolExecutor executor;
  private final SynchronizationContext events;
  private final List<EmulatorListener> listeners = new CopyOnWriteArrayList<>();
  private final AtomicLong registrations = new AtomicLong();
  private final ReentrantLock lifecycleLock = new ReentrantLock();
  private final ReentrantLock admissionLock = new ReentrantLock();
  private final ReentrantLock checkpointLock = new ReentrantLock();
  private final Object lock = new Object();

  // Guarded by lifecycleLock.
  private final List<Server> servers = new ArrayList<>();

  // Guarded by checkpointLock: once set, queued checkpoint writes are dropped.
  private boolean checkpointsStopped;
  // Guarded by lock: a checkpoint write is queued and has not read the state yet.
  private boolean checkpointQueued;

  // Guarded by lock.
  private Lifecycle lifecycle = Lifecycle.NEW;
  private long generation;
  private final Map<String, ResourceState> resources = new TreeMap<>();
  private final Map<String, AdmittedPod> pods = new LinkedHashMap<>();
  private final Set<PluginEndpoint> connecting = new HashSet<>();

  // EpollEventLoopGroup is deprecated in Netty 4.2 but is the group LIBRARIES.md verified with
  // grpc-netty-shaded's domain socket channels.
  @SuppressWarnings("deprecation")
  private KubeletEmulator(Builder b) {
    this.dir = b.dir;
    this.podResourcesSocket = b.podResourcesSocket.orElse(b.dir.resolve(POD_RESOURCES_SOCKET));
    this.directory = new EmulatorDirectory(dir, dir.resolve(KUBELET_SOCKET), podResourcesSocket);
    this.staleTimeout = b.staleTimeout;
    this.dialTimeout = b.dialTimeout;
    this.writeCheckpoint = b.writeCheckpoint;
    this.ownsGroup = b.group.isEmpty();
    this.group =
        b.group.orElseGet(
            () ->
                new EpollEventLoopGroup(1, new DefaultThreadFactory("kubelet-emulator-io", true)));
    this.executor = new ScheduledThreadPoolExecutor(2, new NamedDaemonThreads());
    this.executor.setRemoveOnCancelPolicy(true);
    this.executor.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    this.events =
        new SynchronizationContext(
            (thread, error) -> log.warn("Emulator listener or checkpoint task failed", error));
  }

  /** Starts building an emulator for the given device plugin dir. */
  public static Builder builder(Path devicePluginDir) {
    return new Builder(devicePluginDir);
  }

  // ---------------------------------------------------------------- lifecycle

  /**
   * Refuses a directory that belongs to a kubelet (a {@code kubelet.sock} or PodResources socket
   * that accepts connections, a checkpoint the emulator did not write), creates the dir if missing,
   * then serves Registration on {@code kubelet.sock} and PodResources on the pod-resources socket.
   * Unlike a starting kubelet it removes no plugin's socket: only a dead socket file (nobody
   * listens) at its own two socket paths.
   *
   * @throws EmulatorStartException if refused or the directory or sockets cannot be made, with one
   *     line naming the path; nothing in the directory was changed or removed
   * @throws IllegalStateException if already started or closed
   */
  public void start() throws IOException {
    lifecycleLock.lock();
    try {
      synchronized (lock) {
        if (lifecycle != Lifecycle.NEW) {
          throw new IllegalStateException("kubelet emulator was already started");
        }
        lifecycle = Lifecycle.RUNNING;
      }
      try {
        directory.prepare();
        startServers();
      } catch (IOException | RuntimeException e) {
        close();
        throw e;
      }
      log.info(
          "Kubelet emulator serving {} and pod resources on {}",
          kubeletSocket(),
          podResourcesSocket);
    } finally {
      lifecycleLock.unlock();
    }
  }

  /**
   * Simulates a kubelet restart: stops serving, forgets every plugin connection, removes the
   * sockets of the plugins that registered with it (other sockets, the checkpoint and other files
   * stay), and serves {@code kubelet.sock} again. Like a kubelet restored from its checkpoint,
   * every known resource keeps its key with capacity 0 until its plugin registers again, and is
   * dropped after the stale timeout otherwise. Admitted pods keep their devices.
   *
   * @throws IllegalStateException if not running
   */
  public void restart() throws IOException {
    lifecycleLock.lock();
    try {
      synchronized (lock) {
        requireRunningLocked();
      }
      log.info("Kubelet emulator restarting in {}", dir);
      stopServers();
      List<PluginEndpoint> closing = new ArrayList<>();
      synchronized (lock) {
        generation++;
        closing.addAll(connecting);
        connecting.clear();
        for (ResourceState rs : resources.values()) {
          rs.endpoint.ifPresent(closing::add);
          rs.endpoint = Optional.empty();
          if (rs.live) {
            rs.live = false;
            enqueue(l -> l.streamEnded(rs.name));
          }
          if (!rs.dropped) {
            rs.devices.clear();
            stopLocked(rs);
          }
        }
        saveCheckpointLocked();
      }
      fire();
      closing.forEach(PluginEndpoint::close);
      directory.removeForRestart();
      startServers();
      log.info("Kubelet emulator restarted, serving {}", kubeletSocket());
    } finally {
      lifecycleLock.unlock();
    }
  }

  /**
   * Stops serving, closes every plugin connection, removes {@code kubelet.sock} and the
   * PodResources socket (only if the emulator served them) and shuts down the event loop group if
   * the emulator created it. Idempotent.
   */
  @Override
  public void close() {
    lifecycleLock.lock();
    try {
      List<PluginEndpoint> closing = new ArrayList<>();
      synchronized (lock) {
        if (lifecycle == Lifecycle.CLOSED) {
          return;
        }
        lifecycle = Lifecycle.CLOSED;
        generation++;
        closing.addAll(connecting);
        connecting.clear();
        for (ResourceState rs : resources.values()) {
          rs.endpoint.ifPresent(closing::add);
          rs.cancelStaleTimer();
        }
      }
      // Waits for a write in progress; writes still queued (behind a slow listener, say) are
      // dropped, so nothing touches the directory once close() has returned.
      checkpointLock.lock();
      try {
        checkpointsStopped = true;
      } finally {
        checkpointLock.unlock();
      }
      stopServers();
      closing.forEach(PluginEndpoint::close);
      for (PluginEndpoint ep : closing) {
        ep.awaitClosed(1000);
      }
      executor.shutdown();
      executor.awaitTermination(2, TimeUnit.SECONDS);
      if (ownsGroup) {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly(5, TimeUnit.SECONDS);
      }
      directory.removeOwnSockets();
      log.info("Kubelet emulator stopped ({})", dir);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } finally {
      lifecycleLock.unlock();
    }
  }

  private void startServers() throws IOException {
    servers.add(serve(kubeletSocket(), new RegistrationService(this)));
    servers.add(serve(podResourcesSocket, new PodResourcesService(this)));
  }

  private Server serve(Path socket, io.grpc.BindableService service) throws IOException {
    Server server = serverOn(socket).addService(service).build();
    try {
      server.start();
    } catch (IOException e) {
      throw EmulatorDirectory.cannotServe(socket, e);
    }
    directory.bound(socket);
    return server;
  }

  private NettyServerBuilder serverOn(Path socket) {
    return NettyServerBuilder.forAddress(new DomainSocketAddress(socket.toString()))
        .channelType(EpollServerDomainSocketChannel.class)
        .bossEventLoopGroup(group)
        .workerEventLoopGroup(group)
        .executor(executor);
  }

  private void stopServers() {
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

  // ---------------------------------------------------------------- queries

  /** The device plugin dir. */
  public Path devicePluginDir() {
    return dir;
  }

  /** {@code <dir>/kubelet.sock}. */
  public Path kubeletSocket() {
    return dir.resolve(KUBELET_SOCKET);
  }

  /** The PodResources socket. */
  public Path podResourcesSocket() {
    return podResourcesSocket;
  }

  /**
   * Resource to device count, like {@code node.status.capacity} for extended resources: a resource
   * dropped after the stale timeout (or restored from a restart without its plugin) stays with 0,
   * as on a real node.
   */
  public Map<String, Long> capacity() {
    synchronized (lock) {
      Map<String, Long> out = new TreeMap<>();
      resources.forEach((name, rs) -> out.put(name, rs.capacity()));
      return Collections.unmodifiableMap(out);
    }
  }

  /** Resource to healthy device count, like {@code node.status.allocatable}. */
  public Map<String, Long> allocatable() {
    synchronized (lock) {
      Map<String, Long> out = new TreeMap<>();
      resources.forEach((name, rs) -> out.put(name, rs.allocatable()));
      return Collections.unmodifiableMap(out);
    }
  }

  /**
   * Device id to "Healthy"/"Unhealthy" from the latest ListAndWatch snapshot (all "Unhealthy" once
   * the stream ended); an empty map for an unknown or dropped resource.
   */
  public Map<String, String> devices(String resource) {
    synchronized (lock) {
      ResourceState rs = resources.get(resource);
      return rs == null ? Map.of() : Collections.unmodifiableMap(new LinkedHashMap<>(rs.devices));
    }
  }

  /** Resources whose current endpoint has an open ListAndWatch stream. */
  public Set<String> registeredResources() {
    synchronized (lock) {
      Set<String> out = new TreeSet<>();
      resources.forEach(
          (name, rs) -> {
            if (rs.live) {
              out.add(name);
            }
          });
      return Collections.unmodifiableSet(out);
    }
  }

  /** How many Register calls were accepted since construction. */
  public long registrations() {
    return registrations.get();
  }

  /** Adds a listener; see {@link EmulatorListener} for threading. */
  public void addListener(EmulatorListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
  }

  /** Removes a listener added before; no-op if absent. */
  public void removeListener(EmulatorListener listener) {
    listeners.remove(listener);
  }

  /** Admitted pods in admission order. */
  public List<PodAdmission> pods() {
    synchronized (lock) {
      return pods.values().stream().map(AdmittedPod::admission).toList();
    }
  }

  // ---------------------------------------------------------------- registration

  /** Register handler: validates, then dials and reads options asynchronously before answering. */
  void onRegister(RegisterRequest request, StreamObserver<Empty> response) {
    String resource = request.getResourceName();
    log.info(
        "Registration request for resource {} (version {}, endpoint {})",
        resource,
        request.getVersion(),
        request.getEndpoint());
    if (!API_VERSION.equals(request.getVersion())) {
      reject(
          resource,
          "requested API version "
              + GoErrors.quote(request.getVersion())
              + " is not supported by kubelet. Supported versions are [\""
              + API_VERSION
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
            .executor(executor)
            .usePlaintext();
    // One channel per plugin: without grpc-census on the class path, a builder with census on
    // looks its classes up in vain each time (ClassNotFoundExceptions, measured with JFR).
    InternalNettyChannelBuilder.setStatsEnabled(builder, false);
    InternalNettyChannelBuilder.setTracingEnabled(builder, false);
    ManagedChannel channel = builder.build();
    PluginEndpoint ep = null;
    synchronized (lock) {
      if (lifecycle == Lifecycle.RUNNING) {
        ep = new PluginEndpoint(resource, request.getEndpoint(), generation, channel);
        connecting.add(ep);
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
                executor.schedule(this::dialTimedOut, dialTimeout.toNanos(), TimeUnit.NANOSECONDS));
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
      ConnectivityState state = ep.channel.getState(true);
      if (state == ConnectivityState.READY) {
        connected();
      } else if (state == ConnectivityState.SHUTDOWN) {
        if (dialDone.compareAndSet(false, true)) {
          fail("failed to dial device plugin: context canceled");
        }
      } else {
        // Transient failures are retried with backoff by the channel, like a blocking Go dial.
        ep.channel.notifyWhenStateChanged(state, this::watch);
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
      synchronized (lock) {
        connecting.remove(ep);
      }
      ep.close();
      reject(ep.resource, reason, response);
    }
  }

  private void reject(String resource, String reason, StreamObserver<Empty> response) {
    log.warn("Registration of resource {} rejected: {}", resource, reason);
    synchronized (lock) {
      enqueue(l -> l.registrationRejected(resource, reason));
    }
    fire();
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
    synchronized (lock) {
      connecting.remove(ep);
      accepted = lifecycle == Lifecycle.RUNNING && ep.generation == generation;
      if (accepted) {
        ResourceState rs = resources.computeIfAbsent(ep.resource, ResourceState::new);
        replaced = rs.endpoint;
        replacedWasLive = rs.live;
        rs.endpoint = Optional.of(ep);
        rs.live = true;
        rs.dropped = false;
        rs.epoch++;
        rs.cancelStaleTimer();
        registrations.incrementAndGet();
        enqueue(l -> l.registered(ep.resource, ep.endpoint));
      }
    }
    fire();
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
    openStream(ep);
  }

  private void openStream(PluginEndpoint ep) {
    ep.async.listAndWatch(
        Empty.getDefaultInstance(),
        new StreamObserver<>() {
          @Override
          public void onNext(ListAndWatchResponse value) {
            onSnapshot(ep, value);
          }

          @Override
          public void onError(Throwable t) {
            onStreamEnd(ep, GoErrors.rpcError(t));
          }

          @Override
          public void onCompleted() {
            onStreamEnd(ep, "EOF");
          }
        });
  }

  private void onSnapshot(PluginEndpoint ep, ListAndWatchResponse response) {
    Map<String, String> snapshot = new LinkedHashMap<>();
    for (Device d : response.getDevicesList()) {
      // Anything but "Healthy" counts as unhealthy.
      snapshot.put(d.getID(), HEALTHY.equals(d.getHealth()) ? HEALTHY : UNHEALTHY);
    }
    boolean current;
    long healthy = snapshot.values().stream().filter(HEALTHY::equals).count();
    synchronized (lock) {
      ResourceState rs = resources.get(ep.resource);
      current = rs != null && rs.live && rs.endpoint.orElse(null) == ep;
      if (current) {
        rs.devices = new LinkedHashMap<>(snapshot);
        Map<String, String> view = Collections.unmodifiableMap(snapshot);
        enqueue(l -> l.snapshot(ep.resource, view));
        saveCheckpointLocked();
      }
    }
    fire();
    if (current) {
      log.info(
          "Resource {}: {} devices, {} healthy (ListAndWatch)",
          ep.resource,
          snapshot.size(),
          healthy);
    } else {
      log.debug("Ignored ListAndWatch message of replaced endpoint {}", ep);
    }
  }

  private void onStreamEnd(PluginEndpoint ep, String cause) {
    boolean current;
    synchronized (lock) {
      ResourceState rs = resources.get(ep.resource);
      current = rs != null && rs.live && rs.endpoint.orElse(null) == ep;
      if (current) {
        rs.live = false;
        rs.devices.replaceAll((id, health) -> UNHEALTHY);
        stopLocked(rs);
        enqueue(l -> l.streamEnded(ep.resource));
        saveCheckpointLocked();
      }
    }
    fire();
    if (current) {
      log.warn(
          "ListAndWatch of resource {} ended ({}): all devices unhealthy; dropped in {} unless it"
              + " registers again",
          ep.resource,
          cause,
          staleTimeout);
    } else {
      log.debug("ListAndWatch of replaced endpoint {} ended ({})", ep, cause);
    }
    // The kubelet disconnects the client and never redials.
    ep.close();
  }

  /** Marks the resource stopped now and schedules its drop after the stale timeout. */
  private void stopLocked(ResourceState rs) {
    rs.epoch++;
    long epoch = rs.epoch;
    rs.cancelStaleTimer();
    try {
      rs.staleTimer =
          Optional.of(
              executor.schedule(
                  () -> dropIfStale(rs.name, epoch), staleTimeout.toNanos(), TimeUnit.NANOSECONDS));
    } catch (RejectedExecutionException e) {
      log.debug("Not scheduling the drop of {}: emulator closing", rs.name);
    }
  }

  private void dropIfStale(String resource, long epoch) {
    boolean dropped = false;
    synchronized (lock) {
      ResourceState rs = resources.get(resource);
      if (lifecycle == Lifecycle.RUNNING
          && rs != null
          && rs.epoch == epoch
          && !rs.live
          && !rs.dropped) {
        rs.dropped = true;
        rs.devices.clear();
        rs.endpoint = Optional.empty();
        rs.staleTimer = Optional.empty();
        dropped = true;
        enqueue(l -> l.resourceDropped(resource));
        saveCheckpointLocked();
      }
    }
    fire();
    if (dropped) {
      log.info(
          "Resource {} had no device plugin for {}: dropped, node capacity now 0",
          resource,
          staleTimeout);
    }
  }

  // ---------------------------------------------------------------- admission

  /**
   * Admits a pod like the kubelet's device manager: for each container (init containers first, in
   * order) and each extended resource it requests, picks devices, calls GetPreferredAllocation when
   * the plugin asked for it, then exactly one Allocate RPC with one container request (no deadline;
   * only {@code container_responses[0]} is used). Devices of init containers are reused by the
   * following containers of the same pod. Then the containers are started in order, calling
   * PreStartContainer (30 s deadline) where the plugin requires it. On any failure nothing stays
   * allocated to the pod.
   *
   * <p>Admissions are serialised; plugin RPCs run on the calling thread.
   *
   * @throws AdmissionException with reason {@code Insufficient <resource>}, {@value
   *     AdmissionException#UNEXPECTED_ADMISSION_ERROR} or {@value
   *     AdmissionException#CREATE_CONTAINER_CONFIG_ERROR}
   * @throws IllegalStateException if the emulator is not running or the pod is already admitted
   */
  public PodAdmission admit(Pod pod) throws AdmissionException {
    Objects.requireNonNull(pod, "pod");
    String key = key(pod.namespace(), pod.name());
    admissionLock.lock();
    try {
      synchronized (lock) {
        requireRunningLocked();
        if (pods.containsKey(key)) {
          throw new IllegalStateException("pod " + key + " is already admitted");
        }
      }
      try {
        AdmittedPod admitted = allocatePod(pod);
        synchronized (lock) {
          requireRunningLocked();
          pods.put(key, admitted);
          saveCheckpointLocked();
        }
        fire();
        log.info("Admitted pod {}: {}", key, describe(admitted.admission()));
        return admitted.admission();
      } catch (AdmissionException e) {
        log.warn("Pod {} rejected: {}: {}", key, e.reason(), e.getMessage());
        throw e;
      }
    } finally {
      admissionLock.unlock();
    }
  }

  private AdmittedPod allocatePod(Pod pod) throws AdmissionException {
    // Devices held by this pod so far (they count as in use for its later containers).
    Map<String, Set<String>> held = new HashMap<>();
    // The kubelet's devicesToReuse: init container devices, free for the next containers.
    Map<String, Set<String>> reusable = new HashMap<>();
    Map<String, ContainerAllocation> allocations = new LinkedHashMap<>();
    Map<String, Map<String, ContainerAllocateResponse>> responses = new LinkedHashMap<>();
    List<Container> all = pod.allContainers();
    for (int i = 0; i < all.size(); i++) {
      Container c = all.get(i);
      boolean init = i < pod.initContainers().size();
      Map<String, List<String>> ids = new LinkedHashMap<>();
      Map<String, ContainerAllocateResponse> answers = new LinkedHashMap<>();
      for (Map.Entry<String, Long> request : c.requests().entrySet()) {
        String resource = request.getKey();
        long count = request.getValue();
        if (!resource.contains("/") || count <= 0) {
          continue; // not a device plugin resource, or nothing to allocate
        }
        List<String> picked =
            pick(
                resource,
                (int) Math.min(count, Integer.MAX_VALUE),
                reusable.getOrDefault(resource, Set.of()),
                held.getOrDefault(resource, Set.of()));
        held.computeIfAbsent(resource, r -> new LinkedHashSet<>()).addAll(picked);
        answers.put(resource, allocate(pod, c, resource, picked));
        ids.put(resource, picked);
      }
      ids.forEach(
          (resource, list) -> {
            if (init) {
              reusable.computeIfAbsent(resource, r -> new LinkedHashSet<>()).addAll(list);
            } else {
              reusable.getOrDefault(resource, new HashSet<>()).removeAll(list);
            }
          });
      allocations.put(c.name(), ContainerAllocation.merge(ids, answers));
      responses.put(c.name(), answers);
    }
    for (Container c : all) {
      startContainer(c.name(), allocations.get(c.name()).deviceIds());
    }
    return new AdmittedPod(
        pod, new PodAdmission(pod.namespace(), pod.name(), allocations), responses);
  }

  /** The kubelet's devicesToAllocate without topology: reuse, preferred, then any available. */
  private List<String> pick(String resource, int required, Set<String> reusable, Set<String> held)
      throws AdmissionException {
    List<String> picked = new ArrayList<>();
    for (String id : reusable) {
      if (picked.size() == required) {
        break;
      }
      picked.add(id);
    }
    if (picked.size() == required) {
      return picked; // no plugin call when init-container devices suffice
    }
    PluginEndpoint ep;
    List<String> available;
    synchronized (lock) {
      ResourceState rs = resources.get(resource);
      Set<String> inUse = inUseLocked(resource);
      inUse.addAll(held);
      inUse.addAll(picked);
      available =
          rs == null || rs.dropped
              ? List.of()
              : rs.devices.entrySet().stream()
                  .filter(e -> HEALTHY.equals(e.getValue()) && !inUse.contains(e.getKey()))
                  .map(Map.Entry::getKey)
                  .toList();
      if (rs == null || rs.endpoint.isEmpty() || available.size() < required - picked.size()) {
        throw AdmissionException.insufficient(resource, required, available.size() + picked.size());
      }
      ep = rs.endpoint.get();
    }
    if (ep.options().getGetPreferredAllocationAvailable()) {
      List<String> offered = new ArrayList<>(available);
      offered.addAll(picked);
      PreferredAllocationResponse answer;
      try {
        answer =
            ep.blocking.getPreferredAllocation(
                PreferredAllocationRequest.newBuilder()
                    .addContainerRequests(
                        ContainerPreferredAllocationRequest.newBuilder()
                            .addAllAvailableDeviceIDs(offered)
                            .addAllMustIncludeDeviceIDs(picked)
                            .setAllocationSize(required))
                    .build());
      } catch (StatusRuntimeException e) {
        throw AdmissionException.unexpected(
            "device plugin GetPreferredAllocation rpc failed with err: " + GoErrors.rpcError(e));
      }
      if (answer.getContainerResponsesCount() > 0) {
        Set<String> availableSet = new HashSet<>(available);
        for (String id : answer.getContainerResponses(0).getDeviceIDsList()) {
          if (picked.size() == required) {
            break;
          }
          // The kubelet intersects the answer with the available devices.
          if (availableSet.contains(id) && !picked.contains(id)) {
            picked.add(id);
          }
        }
      }
    }
    for (String id : available) {
      if (picked.size() == required) {
        break;
      }
      if (!picked.contains(id)) {
        picked.add(id);
      }
    }
    return picked;
  }

  private Set<String> inUseLocked(String resource) {
    Set<String> inUse = new HashSet<>();
    for (AdmittedPod p : pods.values()) {
      for (ContainerAllocation a : p.admission().containers().values()) {
        inUse.addAll(a.deviceIds(resource));
      }
    }
    return inUse;
  }

  private ContainerAllocateResponse allocate(
      Pod pod, Container container, String resource, List<String> ids) throws AdmissionException {
    PluginEndpoint ep;
    synchronized (lock) {
      ResourceState rs = resources.get(resource);
      if (rs == null || rs.endpoint.isEmpty()) {
        throw AdmissionException.unexpected("unknown Device Plugin " + resource);
      }
      if (!rs.live) {
        throw AdmissionException.unexpected("endpoint " + resource + " has been stopped");
      }
      ep = rs.endpoint.get();
    }
    log.debug(
        "Allocate {} {} for container {} of pod {}/{}",
        resource,
        ids,
        container.name(),
        pod.namespace(),
        pod.name());
    AllocateResponse answer;
    try {
      answer =
          ep.blocking.allocate(
              AllocateRequest.newBuilder()
                  .addContainerRequests(ContainerAllocateRequest.newBuilder().addAllDevicesIds(ids))
                  .build());
    } catch (StatusRuntimeException e) {
      throw AdmissionException.unexpected(GoErrors.rpcError(e));
    }
    if (answer.getContainerResponsesCount() == 0) {
      throw AdmissionException.unexpected(
          "no containers return in allocation response " + answer.toString().trim());
    }
    return answer.getContainerResponses(0);
  }

  /** Before a container starts: PreStartContainer per resource whose plugin requires it. */
  private void startContainer(String container, Map<String, List<String>> deviceIds)
      throws AdmissionException {
    for (Map.Entry<String, List<String>> e : deviceIds.entrySet()) {
      String resource = e.getKey();
      PluginEndpoint ep;
      boolean live;
      synchronized (lock) {
        ResourceState rs = resources.get(resource);
        if (rs == null || rs.endpoint.isEmpty()) {
          throw AdmissionException.preStartFailed(
              "endpoint not found in cache for a registered resource: " + resource);
        }
        ep = rs.endpoint.get();
        live = rs.live;
      }
      if (!ep.options().getPreStartRequired()) {
        continue;
      }
      if (!live) {
        throw AdmissionException.preStartFailed("endpoint " + resource + " has been stopped");
      }
      try {
        ep.blocking
            .withDeadlineAfter(PRE_START_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS)
            .preStartContainer(
                PreStartContainerRequest.newBuilder().addAllDevicesIds(e.getValue()).build());
        log.debug("PreStartContainer {} {} for container {}", resource, e.getValue(), container);
      } catch (StatusRuntimeException ex) {
        throw AdmissionException.preStartFailed(GoErrors.rpcError(ex));
      }
    }
  }

  /**
   * Simulates a restart of one container of an admitted pod: calls PreStartContainer again where
   * required, but not Allocate (the kubelet caches the Allocate answer).
   *
   * @throws IllegalArgumentException if the pod or container is unknown
   * @throws AdmissionException with reason {@value
   *     AdmissionException#CREATE_CONTAINER_CONFIG_ERROR} if PreStartContainer fails
   */
  public void restartContainer(String namespace, String name, String container)
      throws AdmissionException {
    Map<String, List<String>> deviceIds;
    synchronized (lock) {
      AdmittedPod pod = pods.get(key(namespace, name));
      if (pod == null || !pod.admission().containers().containsKey(container)) {
        throw new IllegalArgumentException(
            "no container " + container + " in admitted pod " + key(namespace, name));
      }
      deviceIds = pod.admission().container(container).deviceIds();
    }
    startContainer(container, deviceIds);
    log.info("Restarted container {} of pod {}", container, key(namespace, name));
  }

  /** The pod was deleted: its devices are free again. No-op for an unknown pod. */
  public void removePod(String namespace, String name) {
    AdmittedPod removed;
    synchronized (lock) {
      removed = pods.remove(key(namespace, name));
      if (removed != null) {
        saveCheckpointLocked();
      }
    }
    fire();
    if (removed != null) {
      log.info("Removed pod {}: its devices are free again", key(namespace, name));
    }
  }

  /** PodResources v1 List: every admitted pod, its app containers and their devices. */
  ListPodResourcesResponse listPodResources() {
    ListPodResourcesResponse.Builder out = ListPodResourcesResponse.newBuilder();
    synchronized (lock) {
      for (AdmittedPod p : pods.values()) {
        PodResources.Builder pr =
            PodResources.newBuilder().setName(p.pod().name()).setNamespace(p.pod().namespace());
        // Like the kubelet's v1 List: app containers only.
        for (Container c : p.pod().containers()) {
          ContainerResources.Builder cr = ContainerResources.newBuilder().setName(c.name());
          p.admission()
              .container(c.name())
              .deviceIds()
              .forEach(
                  (resource, ids) ->
                      cr.addDevices(
                          ContainerDevices.newBuilder()
                              .setResourceName(resource)
                              .addAllDeviceIds(ids)));
          pr.addContainers(cr);
        }
        out.addPodResources(pr);
      }
    }
    return out.build();
  }

  // ---------------------------------------------------------------- helpers

  static String key(String namespace, String name) {
    return namespace + "/" + name;
  }

  private static String describe(PodAdmission admission) {
    StringBuilder b = new StringBuilder();
    admission
        .containers()
        .forEach(
            (container, a) -> {
              if (!a.deviceIds().isEmpty()) {
                if (b.length() > 0) {
                  b.append("; ");
                }
                b.append(container).append(' ').append(a.deviceIds());
              }
            });
    return b.length() == 0 ? "no devices" : b.toString();
  }

  private void requireRunningLocked() {
    if (lifecycle != Lifecycle.RUNNING) {
      throw new IllegalStateException("kubelet emulator is not running (" + lifecycle + ")");
    }
  }

  /** Queues a listener callback; call with the lock held, then {@link #fire()} after it. */
  private void enqueue(Consumer<EmulatorListener> event) {
    events.executeLater(
        () -> {
          for (EmulatorListener l : listeners) {
            try {
              event.accept(l);
            } catch (RuntimeException e) {
              log.warn("Emulator listener {} failed", l, e);
            }
          }
        });
  }

  /** Delivers queued events in order; never call with the lock held. */
  private void fire() {
    events.drain();
  }

  /**
   * Queues a checkpoint write unless one is queued that has not read the state yet: that one will
   * write this change too. The state is read when the write runs, so a burst of registrations (each
   * ListAndWatch message changes the registered devices) costs one serialization of every resource,
   * not one per message; the file still follows every change, in order, since queued work runs one
   * task at a time.
   */
  private void saveCheckpointLocked() {
    if (!writeCheckpoint || checkpointQueued) {
      return;
    }
    checkpointQueued = true;
    events.executeLater(this::writeCheckpoint);
  }

  private void writeCheckpoint() {
    String json;
    synchronized (lock) {
      checkpointQueued = false;
      Map<String, List<String>> registered = new TreeMap<>();
      resources.forEach(
          (name, rs) -> {
            if (!rs.dropped) {
              registered.put(name, List.copyOf(rs.devices.keySet()));
            }
          });
      json = Checkpoint.json(pods.values(), registered);
    }
    checkpointLock.lock();
    try {
      if (!checkpointsStopped) {
        Checkpoint.write(dir, json);
      }
    } catch (IOException e) {
      log.warn("Could not write {}: {}", dir.resolve(CHECKPOINT_FILE), e.toString());
    } finally {
      checkpointLock.unlock();
    }
  }

  private static final class NamedDaemonThreads implements ThreadFactory {
    private final AtomicInteger count = new AtomicInteger();

    @Override
    public Thread newThread(Runnable r) {
      Thread t = new Thread(r, "kubelet-emulator-" + count.incrementAndGet());
      t.setDaemon(true);
      return t;
    }
  }

  /** Builds a {@link KubeletEmulator}; every setting but the dir is optional. */
  public static final class Builder {
    private final Path dir;
    private Optional<Path> podResourcesSocket = Optional.empty();
    private Duration staleTimeout = DEFAULT_STALE_RESOURCE_TIMEOUT;
    private Duration dialTimeout = DEFAULT_DIAL_TIMEOUT;
    private Optional<EventLoopGroup> group = Optional.empty();
    private boolean writeCheckpoint = true;

    private Builder(Path dir) {
      this.dir = Objects.requireNonNull(dir, "devicePluginDir");
    }

    /** Default: {@code <dir>/pod-resources.sock}, inside the emulator's own directory. */
    public Builder podResourcesSocket(Path socket) {
      this.podResourcesSocket = Optional.of(socket);
      return this;
    }

    /** How long a resource without a stream keeps its capacity; default 5 minutes. */
    public Builder staleResourceTimeout(Duration timeout) {
      this.staleTimeout = requirePositive(timeout);
      return this;
    }

    /** How long Register waits for the plugin's socket to accept; default 10 s like the kubelet. */
    public Builder dialTimeout(Duration timeout) {
      this.dialTimeout = requirePositive(timeout);
      return this;
    }

    /**
     * A shared epoll event loop group (not shut down by the emulator). Without one the emulator
     * owns an {@code EpollEventLoopGroup(1)}.
     */
    public Builder eventLoopGroup(EventLoopGroup group) {
      this.group = Optional.of(group);
      return this;
    }

    /** Whether to write {@code kubelet_internal_checkpoint} after changes; default true. */
    public Builder writeCheckpoint(boolean write) {
      this.writeCheckpoint = write;
      return this;
    }

    public KubeletEmulator build() {
      return new KubeletEmulator(this);
    }

    private static Duration requirePositive(Duration d) {
      if (d.isNegative() || d.isZero()) {
        throw new IllegalArgumentException("duration must be positive: " + d);
      }
      return d;
    }
  }
}
