package io.jakri.kubelet.emulator;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import io.grpc.netty.shaded.io.netty.util.concurrent.DefaultThreadFactory;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.ReentrantLock;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Emulates the kubelet's device manager as described in {@code KUBELET.md}: serves {@code
 * Registration} on {@code <dir>/kubelet.sock} and PodResources {@code List} on its own socket,
 * dials registered plugins, follows their ListAndWatch streams, and admits pods by calling
 * GetPreferredAllocation, Allocate and PreStartContainer like the kubelet does. It never touches a
 * real kubelet: see {@link #start()}.
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
 *
 * <p>This class is the lifecycle and the public face; the work follows the kubelet's seams: {@link
 * Registrar} (registration and endpoints), {@link DeviceStreams} (device state and streams), {@link
 * PodAdmitter} (pod admission and allocation), {@link CheckpointWriter} (the checkpoint), {@link
 * PodResourcesService} (PodResources) and {@link EmulatorDirectory} (its own directory).
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

  private final Path dir;
  private final Path podResourcesSocket;
  private final EmulatorDirectory directory;
  private final EventLoopGroup group;
  private final boolean ownsGroup;
  private final EmulatorState state = new EmulatorState();
  private final CheckpointWriter checkpoint;
  private final DeviceStreams streams;
  private final Registrar registrar;
  private final PodAdmitter admitter;
  private final ReentrantLock lifecycleLock = new ReentrantLock();
  private final Duration registerDelay;

  // Guarded by lifecycleLock.
  private final EmulatorServers servers;

  // EpollEventLoopGroup is deprecated in Netty 4.2 but is the group LIBRARIES.md verified with
  // grpc-netty-shaded's domain socket channels.
  @SuppressWarnings("deprecation")
  private KubeletEmulator(Builder b) {
    this.dir = b.dir;
    this.podResourcesSocket = b.podResourcesSocket.orElse(b.dir.resolve(POD_RESOURCES_SOCKET));
    this.directory = new EmulatorDirectory(dir, dir.resolve(KUBELET_SOCKET), podResourcesSocket);
    this.ownsGroup = b.group.isEmpty();
    this.group =
        b.group.orElseGet(
            () ->
                new EpollEventLoopGroup(1, new DefaultThreadFactory("kubelet-emulator-io", true)));
    this.checkpoint = new CheckpointWriter(dir, b.writeCheckpoint, state);
    this.streams = new DeviceStreams(state, checkpoint, b.staleTimeout);
    this.registrar = new Registrar(dir, directory, b.dialTimeout, group, state, streams);
    this.admitter = new PodAdmitter(state, checkpoint);
    this.servers = new EmulatorServers(group, state.executor, directory);
    this.registerDelay = b.registerDelay;
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
      synchronized (state.lock) {
        if (state.lifecycle != EmulatorState.Lifecycle.NEW) {
          throw new IllegalStateException("kubelet emulator was already started");
        }
        state.lifecycle = EmulatorState.Lifecycle.RUNNING;
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
      synchronized (state.lock) {
        state.requireRunningLocked();
      }
      log.info("Kubelet emulator restarting in {}", dir);
      servers.stop();
      List<PluginEndpoint> closing = new ArrayList<>();
      synchronized (state.lock) {
        state.generation++;
        closing.addAll(state.connecting);
        state.connecting.clear();
        streams.restartLocked(closing);
        checkpoint.saveLocked();
      }
      state.fire();
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
      synchronized (state.lock) {
        if (state.lifecycle == EmulatorState.Lifecycle.CLOSED) {
          return;
        }
        state.lifecycle = EmulatorState.Lifecycle.CLOSED;
        state.generation++;
        closing.addAll(state.connecting);
        state.connecting.clear();
        streams.closeLocked(closing);
      }
      // Waits for a write in progress; writes still queued (behind a slow listener, say) are
      // dropped, so nothing touches the directory once close() has returned.
      checkpoint.stop();
      servers.stop();
      closing.forEach(PluginEndpoint::close);
      for (PluginEndpoint ep : closing) {
        ep.awaitClosed(1000);
      }
      state.executor.shutdown();
      state.executor.awaitTermination(2, TimeUnit.SECONDS);
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
    servers.serve(kubeletSocket(), new RegistrationService(registrar, registerDelay, group));
    servers.serve(podResourcesSocket, new PodResourcesService(state));
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
    return streams.capacity();
  }

  /** Resource to healthy device count, like {@code node.status.allocatable}. */
  public Map<String, Long> allocatable() {
    return streams.allocatable();
  }

  /**
   * Device id to "Healthy"/"Unhealthy" from the latest ListAndWatch snapshot (all "Unhealthy" once
   * the stream ended); an empty map for an unknown or dropped resource.
   */
  public Map<String, String> devices(String resource) {
    return streams.devices(resource);
  }

  /** Resources whose current endpoint has an open ListAndWatch stream. */
  public Set<String> registeredResources() {
    return streams.registeredResources();
  }

  /** How many Register calls were accepted since construction. */
  public long registrations() {
    return registrar.registrations();
  }

  /** Adds a listener; see {@link EmulatorListener} for threading. */
  public void addListener(EmulatorListener listener) {
    state.addListener(listener);
  }

  /** Removes a listener added before; no-op if absent. */
  public void removeListener(EmulatorListener listener) {
    state.removeListener(listener);
  }

  /** Admitted pods in admission order. */
  public List<PodAdmission> pods() {
    return admitter.pods();
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
    return admitter.admit(Objects.requireNonNull(pod, "pod"));
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
    admitter.restartContainer(namespace, name, container);
  }

  /** The pod was deleted: its devices are free again. No-op for an unknown pod. */
  public void removePod(String namespace, String name) {
    admitter.removePod(namespace, name);
  }

  /** Builds a {@link KubeletEmulator}; every setting but the dir is optional. */
  public static final class Builder {
    private final Path dir;
    private Optional<Path> podResourcesSocket = Optional.empty();
    private Duration staleTimeout = DEFAULT_STALE_RESOURCE_TIMEOUT;
    private Duration dialTimeout = DEFAULT_DIAL_TIMEOUT;
    private Optional<EventLoopGroup> group = Optional.empty();
    private boolean writeCheckpoint = true;
    private Duration registerDelay = Duration.ZERO;

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

    /**
     * A slow kubelet: each Register is handled (validated, the plugin dialled, answered) this long
     * after it arrived, all of them side by side; default 0 (at once). For benchmarks of a kubelet
     * that answers Register in, say, 100 ms.
     */
    public Builder registerDelay(Duration delay) {
      if (delay.isNegative()) {
        throw new IllegalArgumentException("duration must not be negative: " + delay);
      }
      this.registerDelay = delay;
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
