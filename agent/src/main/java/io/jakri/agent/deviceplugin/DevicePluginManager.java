package io.jakri.agent.deviceplugin;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one device-plugin gRPC server per resource and keeps each registered with the kubelet.
 *
 * <p>A resource's server is serving before Register is sent (the kubelet dials it and calls
 * GetDevicePluginOptions before answering Register). Registration is retried with backoff while
 * {@code kubelet.sock} is missing or refuses. The device-plugin directory is watched (inotify):
 * when {@code kubelet.sock} is created anew (a kubelet restart deletes every socket and listens
 * again) or one of our sockets disappears, the affected servers are started again on fresh sockets
 * and registered again. All state changes run on one control thread; public methods may be called
 * from any thread and return at once.
 */
public final class DevicePluginManager implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);
  private static final String KUBELET_SOCKET = "kubelet.sock";
  private static final String VERSION = "v1beta1";
  private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(50);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);
  private static final Duration CONSISTENCY_CHECK = Duration.ofSeconds(5);
  private static final Duration COALESCE = Duration.ofMillis(5);

  private final Path dir;
  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ExecutorService control;
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicBoolean resyncPending = new AtomicBoolean();
  private final List<Listener> listeners = new java.util.concurrent.CopyOnWriteArrayList<>();

  // Confined to the control thread.
  private Object kubeletKey;
  private long generation;
  private ManagedChannel kubeletChannel;
  private WatchService watcher;
  private Thread watchThread;
  private ScheduledFuture<?> periodic;
  private volatile boolean closed;

  /** Told about registration outcomes (for metrics, readiness and tests). */
  public interface Listener {
    default void registered(String resource, String endpoint, boolean again) {}

    default void registrationFailed(String resource, String reason) {}

    default void kubeletRestarted(long generation) {}

    /** The resource was retired for good (no longer served); called on the control thread. */
    default void retired(String resource) {}

    /**
     * An Allocate call for the resource ended after {@code took}; called on the gRPC thread that
     * served it, after the answer was sent. Must not block.
     */
    default void allocated(String resource, AllocateOutcome outcome, Duration took) {}

    /**
     * The kubelet's ListAndWatch streams of the resource are up to date: {@code changed} when a new
     * snapshot of its devices was just sent to at least one stream (an update, or the first
     * snapshot of a new stream), false when the devices were unchanged and the open streams already
     * had them. Not called while no stream is open. Any thread; must not block.
     */
    default void advertised(String resource, boolean changed) {}
  }

  /**
   * Hands the calls of the resource servers to every listener; one listener's bug stays its own.
   */
  private final Listener serverEvents =
      new Listener() {
        @Override
        public void allocated(String resource, AllocateOutcome outcome, Duration took) {
          for (Listener l : listeners) {
            try {
              l.allocated(resource, outcome, took);
            } catch (RuntimeException e) {
              LOG.warn("listener failed on Allocate of {}: {}", resource, e.toString());
            }
          }
        }

        @Override
        public void advertised(String resource, boolean changed) {
          for (Listener l : listeners) {
            try {
              l.advertised(resource, changed);
            } catch (RuntimeException e) {
              LOG.warn("listener failed on a snapshot of {}: {}", resource, e.toString());
            }
          }
        }
      };

  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock) {
    this.dir = dir;
    this.group = group;
    this.grpcExecutor = grpcExecutor;
    this.scheduler = scheduler;
    this.clock = clock;
    this.control =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "jakri-deviceplugin-control");
              t.setDaemon(true);
              return t;
            });
  }

  public void addListener(Listener listener) {
    listeners.add(listener);
  }

  /** Starts watching the device-plugin directory (creating it when missing). */
  public void start() {
    control.execute(this::startWatching);
    periodic =
        scheduler.scheduleWithFixedDelay(
            this::requestResync,
            CONSISTENCY_CHECK.toMillis(),
            CONSISTENCY_CHECK.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  /** Serves {@code backend}'s resource and registers it; a no-op when already served. */
  public void serve(ResourceBackend backend) {
    control.execute(
        () -> {
          if (closed || entries.containsKey(backend.resourceName())) {
            return;
          }
          Entry entry = new Entry(backend);
          entries.put(backend.resourceName(), entry);
          startServer(entry);
          register(entry);
        });
  }

  /** Stops serving a resource for good: ends its streams and removes its socket. */
  public void retire(String resource) {
    control.execute(
        () -> {
          Entry entry = entries.remove(resource);
          if (entry != null) {
            entry.cancelRetry();
            if (entry.server != null) {
              entry.server.stop();
            }
            LOG.info("resource {}: retired", resource);
            for (Listener l : listeners) {
              l.retired(resource);
            }
          }
        });
  }

  /**
   * Pushes the resource's current devices to the kubelet if they changed. Any thread. Refreshes
   * that arrive within {@link #COALESCE} of each other are published once (a class resource with a
   * thousand members would otherwise send a thousand growing snapshots while they appear).
   */
  public void refresh(String resource) {
    Entry entry = entries.get(resource);
    if (entry != null && entry.publishPending.compareAndSet(false, true)) {
      scheduler.schedule(
          () -> {
            entry.publishPending.set(false);
            ResourceServer server = entry.server;
            if (server != null) {
              server.publish();
            }
          },
          COALESCE.toNanos(),
          TimeUnit.NANOSECONDS);
    }
  }

  /** The resources served now. */
  public Set<String> served() {
    return new TreeSet<>(entries.keySet());
  }

  /** The socket of a served resource, if it is being served. */
  public Optional<Path> socketOf(String resource) {
    Entry entry = entries.get(resource);
    return entry == null || entry.server == null
        ? Optional.empty()
        : Optional.of(entry.server.socket());
  }

  /** Whether the kubelet socket exists and the last registration round reached it. */
  public boolean kubeletReachable() {
    return Files.exists(dir.resolve(KUBELET_SOCKET));
  }

  /** Whether every served resource is registered with the current kubelet. */
  public boolean allRegistered() {
    long current = generation;
    return current > 0
        && entries.values().stream().allMatch(e -> e.registeredGeneration == current);
  }

  @Override
  public void close() {
    closed = true;
    if (periodic != null) {
      periodic.cancel(false);
    }
    try {
      control
          .submit(
              () -> {
                for (Entry entry : entries.values()) {
                  entry.cancelRetry();
                  if (entry.server != null) {
                    entry.server.stop();
                  }
                }
                entries.clear();
                if (kubeletChannel != null) {
                  kubeletChannel.shutdownNow();
                }
                closeWatcher();
              })
          .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("device plugins did not stop cleanly: {}", e.toString());
    }
    control.shutdown();
  }

  // ---- control thread ----

  private void startWatching() {
    try {
      Files.createDirectories(dir);
      watcher = FileSystems.getDefault().newWatchService();
      dir.register(
          watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
      watchThread = new Thread(this::watchLoop, "jakri-deviceplugin-watch");
      watchThread.setDaemon(true);
      watchThread.start();
      LOG.info("watching device-plugin directory {}", dir);
    } catch (IOException | RuntimeException e) {
      LOG.error(
          "device-plugin directory {} cannot be watched ({}); retrying in {}s",
          dir,
          e.toString(),
          CONSISTENCY_CHECK.toSeconds());
      closeWatcher();
      scheduler.schedule(
          () -> control.execute(this::startWatching),
          CONSISTENCY_CHECK.toMillis(),
          TimeUnit.MILLISECONDS);
    }
    resync();
  }

  private void watchLoop() {
    WatchService service = watcher;
    while (!closed) {
      WatchKey key;
      try {
        key = service.take();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      boolean relevant = false;
      for (java.nio.file.WatchEvent<?> event : key.pollEvents()) {
        // Our own sockets appearing are not news; a kubelet socket created or any socket
        // deleted (a kubelet restart deletes them all) or a lost event is.
        if (event.kind() == StandardWatchEventKinds.OVERFLOW
            || event.kind() == StandardWatchEventKinds.ENTRY_DELETE
            || KUBELET_SOCKET.equals(String.valueOf(event.context()))) {
          relevant = true;
        }
      }
      if (relevant) {
        requestResync();
      }
      if (!key.reset()) {
        LOG.warn("device-plugin directory {} is no longer watched; re-creating the watch", dir);
        control.execute(this::startWatching);
        return;
      }
    }
  }

  private void closeWatcher() {
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing watch service: {}", e.toString());
      }
      watcher = null;
    }
  }

  private void requestResync() {
    if (!closed && resyncPending.compareAndSet(false, true)) {
      control.execute(
          () -> {
            resyncPending.set(false);
            resync();
          });
    }
  }

  /** Brings reality in line: kubelet generation, our sockets, registrations. Idempotent. */
  private void resync() {
    if (closed) {
      return;
    }
    Object key = fileKey(dir.resolve(KUBELET_SOCKET));
    if (key != null && !key.equals(kubeletKey)) {
      kubeletKey = key;
      generation++;
      if (kubeletChannel != null) {
        kubeletChannel.shutdownNow();
      }
      kubeletChannel = null;
      LOG.info("kubelet socket appeared (generation {}); registering every resource", generation);
      long g = generation;
      listeners.forEach(l -> l.kubeletRestarted(g));
    }
    for (Entry entry : entries.values()) {
      if (entry.server == null || !Files.exists(entry.server.socket())) {
        if (entry.server != null) {
          LOG.info(
              "resource {}: socket {} vanished; serving again",
              entry.backend.resourceName(),
              entry.server.socket().getFileName());
          entry.server.stop();
        }
        startServer(entry);
        entry.registeredGeneration = -1;
      }
      if (entry.registeredGeneration != generation && entry.inFlightGeneration != generation) {
        register(entry);
      }
    }
  }

  private void startServer(Entry entry) {
    String name = entry.backend.socketStem() + "-" + clock.instant().getEpochSecond() + ".sock";
    Path socket = dir.resolve(name);
    ResourceServer server =
        new ResourceServer(entry.backend, socket, group, grpcExecutor, serverEvents);
    try {
      server.start();
      entry.server = server;
    } catch (IOException | RuntimeException e) {
      entry.server = null;
      LOG.error(
          "resource {}: cannot serve on {}: {}; retrying",
          entry.backend.resourceName(),
          socket,
          rootMessage(e));
      listeners.forEach(l -> l.registrationFailed(entry.backend.resourceName(), rootMessage(e)));
      scheduleRetry(entry);
    }
  }

  private void register(Entry entry) {
    if (closed || entry.server == null || !entries.containsKey(entry.backend.resourceName())) {
      return;
    }
    entry.cancelRetry();
    if (generation == 0 || !Files.exists(dir.resolve(KUBELET_SOCKET))) {
      scheduleRetry(entry); // kubelet not (yet) there
      return;
    }
    long g = generation;
    entry.inFlightGeneration = g;
    String endpoint = entry.server.endpoint();
    String resource = entry.backend.resourceName();
    RegisterRequest request =
        RegisterRequest.newBuilder()
            .setVersion(VERSION)
            .setEndpoint(endpoint)
            .setResourceName(resource)
            .setOptions(ResourceServer.OPTIONS)
            .build();
    Futures.addCallback(
        RegistrationGrpc.newFutureStub(channel())
            .withDeadlineAfter(REGISTER_DEADLINE.toMillis(), TimeUnit.MILLISECONDS)
            .register(request),
        new FutureCallback<Empty>() {
          @Override
          public void onSuccess(Empty result) {
            if (entry.inFlightGeneration == g) {
              entry.inFlightGeneration = -1;
            }
            if (g != generation || entries.get(resource) != entry) {
              return; // a newer kubelet or a retired resource: a later round handles it
            }
            boolean again = entry.everRegistered;
            entry.registeredGeneration = g;
            entry.everRegistered = true;
            entry.attempts = 0;
            LOG.info("resource {}: registered with the kubelet as {}", resource, endpoint);
            listeners.forEach(l -> l.registered(resource, endpoint, again));
          }

          @Override
          public void onFailure(Throwable t) {
            if (entry.inFlightGeneration == g) {
              entry.inFlightGeneration = -1;
            }
            if (entries.get(resource) != entry) {
              return;
            }
            String reason = rootMessage(t);
            if (entry.attempts % 10 == 0) {
              LOG.warn(
                  "resource {}: registration failed (attempt {}): {}",
                  resource,
                  entry.attempts + 1,
                  reason);
            }
            listeners.forEach(l -> l.registrationFailed(resource, reason));
            scheduleRetry(entry);
          }
        },
        control);
  }

  private ManagedChannel channel() {
    if (kubeletChannel == null) {
      kubeletChannel =
          NettyChannelBuilder.forAddress(
                  new DomainSocketAddress(dir.resolve(KUBELET_SOCKET).toString()))
              .channelType(EpollDomainSocketChannel.class)
              .eventLoopGroup(group)
              .executor(grpcExecutor)
              .usePlaintext()
              .build();
    }
    return kubeletChannel;
  }

  private void scheduleRetry(Entry entry) {
    entry.cancelRetry();
    long delay =
        Math.min(MAX_BACKOFF.toMillis(), MIN_BACKOFF.toMillis() << Math.min(entry.attempts, 10));
    entry.attempts++;
    entry.retry =
        scheduler.schedule(
            () ->
                control.execute(
                    () -> {
                      if (entries.get(entry.backend.resourceName()) != entry) {
                        return;
                      }
                      if (entry.server == null) {
                        startServer(entry);
                      }
                      if (entry.server != null) {
                        register(entry);
                      }
                    }),
            delay,
            TimeUnit.MILLISECONDS);
  }

  private static Object fileKey(Path path) {
    try {
      BasicFileAttributes attrs = Files.readAttributes(path, BasicFileAttributes.class);
      return Objects.requireNonNullElse(attrs.fileKey(), attrs.creationTime());
    } catch (IOException e) {
      return null;
    }
  }

  private static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = t.getMessage() == null ? t.toString() : t.getMessage();
    return root == t ? message : message + " (" + root + ")";
  }

  /** Per-resource state; fields written on the control thread only. */
  private static final class Entry {
    final ResourceBackend backend;
    volatile ResourceServer server;
    volatile long registeredGeneration = -1;
    volatile long inFlightGeneration = -1;
    volatile boolean everRegistered;
    final AtomicBoolean publishPending = new AtomicBoolean();
    int attempts;
    ScheduledFuture<?> retry;

    Entry(ResourceBackend backend) {
      this.backend = backend;
    }

    void cancelRetry() {
      if (retry != null) {
        retry.cancel(false);
        retry = null;
      }
    }
  }
}
