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
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
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
 *
 * <p>Servers are started (and, after a kubelet restart, stopped and started again) on a small pool
 * of starter threads (as many as cores, 2 to 8), several at a time: gRPC's {@code Server.start()}
 * blocks until the event loop has bound the socket, and an event loop busy with the kubelet's dials
 * would otherwise make a thousand starts queue one behind the other. A server's Register is sent
 * from the control thread once its start has completed, so every server is serving before it is
 * registered. At most {@link #IN_FLIGHT} start-and-register rounds are under way at once; the
 * others wait, taken in turn from each Configuration (approximately: resources are grouped by their
 * name without the last {@code -} part), so a handler reporting thousands of devices neither floods
 * the kubelet (which dials, checkpoints and answers every registration while it also admits pods)
 * nor keeps another Configuration's resources waiting behind all of its own.
 *
 * <p>Stopping a server (retired, or replaced after a kubelet restart) begins at once on the control
 * thread (streams end, no new calls); waiting for its termination and removing its socket file runs
 * on a stopper thread, so retiring thousands of resources does not hold the control thread for an
 * event-loop round trip each. A new server of the same resource starts only after the old one has
 * stopped (its stream has ended before the replacement registers).
 *
 * <p>Threading: the timer passed in is used for this manager's own delays only (publish coalescing,
 * retry backoff, the periodic consistency check): give it one not shared with work that may block
 * or queue for long, since ListAndWatch updates are published on it.
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
  private static final int STARTERS =
      Math.min(8, Math.max(2, Runtime.getRuntime().availableProcessors()));
  private static final Duration STARTER_IDLE = Duration.ofSeconds(10);
  private static final Duration STOP_WAIT = Duration.ofSeconds(5);

  /**
   * Start-and-register rounds under way at once (see the class comment). 64 keeps both the agent
   * and the kubelet busy: with 16, each round's hand-offs (starter, event loop, control thread; the
   * kubelet's dial and options call) mostly found their threads parked, and waking them cost the
   * agent and the emulator more CPU than the same registrations sent 64 at a time (the kubelet
   * restart figures are in bench/README.md, "64 rounds instead of 16"). HandlerContainmentIT (a
   * 20,000-device flood beside pods being admitted) passes with 64 and 128.
   */
  static final int IN_FLIGHT = 64;

  private final Path dir;
  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ExecutorService control;
  private final ExecutorService starter;
  private final ExecutorService stopper;
  private final Map<String, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();
  private final Map<String, Entry> entries = new ConcurrentHashMap<>();
  private final AtomicBoolean resyncPending = new AtomicBoolean();
  private final Consumer<DevicePluginEvent> events;

  // Confined to the control thread.
  private Object kubeletKey;
  private long generation;
  private ManagedChannel kubeletChannel;
  private WatchService watcher;
  private Thread watchThread;
  private ScheduledFuture<?> periodic;
  private final Map<String, ArrayDeque<Entry>> waiting = new LinkedHashMap<>();
  private int inFlight;
  private final Map<String, Entry> bySocket = new HashMap<>();
  private volatile boolean closed;

  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock) {
    this(dir, group, grpcExecutor, scheduler, clock, event -> {});
  }

  /**
   * @param events told what happens to the served resources (see {@link DevicePluginEvent} for the
   *     threads); must not block
   */
  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock,
      Consumer<DevicePluginEvent> events) {
    this.dir = dir;
    this.events = events;
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
    // Bounded, and its threads end when idle: the thread count does not grow with resources.
    AtomicInteger starters = new AtomicInteger();
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            STARTERS,
            STARTERS,
            STARTER_IDLE.toMillis(),
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "jakri-deviceplugin-start-" + starters.incrementAndGet());
              t.setDaemon(true);
              return t;
            });
    pool.allowCoreThreadTimeOut(true);
    this.starter = pool;
    ThreadPoolExecutor stops =
        new ThreadPoolExecutor(
            1,
            1,
            STARTER_IDLE.toMillis(),
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            r -> {
              Thread t = new Thread(r, "jakri-deviceplugin-stop");
              t.setDaemon(true);
              return t;
            });
    stops.allowCoreThreadTimeOut(true);
    this.stopper = stops;
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
          startServer(entry); // registers once serving
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
              stopLater(entry, entry.server);
              entry.server = null;
            }
            LOG.info("resource {}: retired", resource);
            emit(new DevicePluginEvent.Retired(resource));
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
    return SocketFiles.exists(dir.resolve(KUBELET_SOCKET));
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
    // Starts in flight finish first; their completions (on the control thread) see closed and
    // stop what they started.
    starter.shutdown();
    try {
      if (!starter.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn("device-plugin servers were still starting after 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    try {
      control
          .submit(
              () -> {
                List<ResourceServer> servers = new java.util.ArrayList<>();
                for (Entry entry : entries.values()) {
                  entry.cancelRetry();
                  if (entry.server != null) {
                    servers.add(entry.server);
                  }
                }
                entries.clear();
                bySocket.clear();
                waiting.clear();
                stopAll(servers);
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
    // Retired servers still stopping: their sockets are gone before close returns.
    stopper.shutdown();
    try {
      if (!stopper.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn("device-plugin servers were still stopping after 30 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
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
      boolean everything = false;
      Set<String> deleted = new HashSet<>();
      for (java.nio.file.WatchEvent<?> event : key.pollEvents()) {
        // Our own sockets appearing are not news. The kubelet socket created or deleted, or a lost
        // event, calls for a full check; a deleted socket only for the resource serving on it
        // (retiring thousands of resources deletes thousands of our own sockets, and a full check
        // per deletion would stat every socket each time).
        String name = String.valueOf(event.context());
        if (event.kind() == StandardWatchEventKinds.OVERFLOW || KUBELET_SOCKET.equals(name)) {
          everything = true;
        } else if (event.kind() == StandardWatchEventKinds.ENTRY_DELETE) {
          deleted.add(name);
        }
      }
      if (everything) {
        requestResync();
      } else if (!deleted.isEmpty() && !closed) {
        control.execute(() -> socketsDeleted(deleted));
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

  /** Serves again the resources whose socket files were deleted. Control thread. */
  private void socketsDeleted(Set<String> names) {
    if (closed) {
      return;
    }
    for (String name : names) {
      Entry entry = bySocket.get(name);
      if (entry == null
          || entry.starting
          || entry.queued
          || entry.server == null
          || entries.get(entry.backend.resourceName()) != entry
          || SocketFiles.exists(entry.server.socket())) {
        continue;
      }
      LOG.debug(
          "resource {}: socket {} vanished; serving again", entry.backend.resourceName(), name);
      startServer(entry);
      entry.registeredGeneration = -1;
    }
  }

  /** Brings reality in line: kubelet generation, our sockets, registrations. Idempotent. */
  private void resync() {
    if (closed) {
      return;
    }
    Optional<Object> key = SocketFiles.key(dir.resolve(KUBELET_SOCKET));
    if (key.isPresent() && !key.get().equals(kubeletKey)) {
      kubeletKey = key.get();
      generation++;
      if (kubeletChannel != null) {
        kubeletChannel.shutdownNow();
      }
      kubeletChannel = null;
      LOG.info("kubelet socket appeared (generation {}); registering every resource", generation);
      long g = generation;
      emit(new DevicePluginEvent.KubeletRestarted(g));
    }
    for (Entry entry : entries.values()) {
      if (entry.starting || entry.queued) {
        continue; // registers (or serves again) when the start completes
      }
      if (entry.server == null || !SocketFiles.exists(entry.server.socket())) {
        if (entry.server != null) {
          LOG.debug(
              "resource {}: socket {} vanished; serving again",
              entry.backend.resourceName(),
              entry.server.socket().getFileName());
        }
        startServer(entry);
        entry.registeredGeneration = -1;
        continue;
      }
      if (entry.registeredGeneration != generation && entry.inFlightGeneration != generation) {
        register(entry);
      }
    }
  }

  /**
   * Stops the entry's current server (if any) and queues the start of a new one; when it is
   * serving, registers it from the control thread. Control thread; at most one start per entry is
   * queued or in flight.
   */
  private void startServer(Entry entry) {
    if (entry.starting || entry.queued) {
      return;
    }
    ResourceServer old = entry.server;
    entry.previous = Optional.empty();
    if (old != null) {
      // Shutdown begins now for every server of a restart round. The new server waits for the old
      // one's end only where it matters: the current kubelet knows the old endpoint (its stream
      // must end before the replacement registers), or the new socket would get the same name.
      // After a kubelet restart the kubelet that held the old stream is gone.
      boolean knownToKubelet =
          entry.registeredGeneration == generation || entry.inFlightGeneration == generation;
      entry.previous = Optional.of(new Previous(old, knownToKubelet));
      stopLater(entry, old);
    }
    entry.server = null;
    entry.queued = true;
    waiting
        .computeIfAbsent(groupOf(entry.backend.resourceName()), k -> new ArrayDeque<>())
        .add(entry);
    pump();
  }

  /** Starts queued servers while fewer than {@link #IN_FLIGHT} rounds are under way; fair. */
  private void pump() {
    while (inFlight < IN_FLIGHT && !waiting.isEmpty() && !closed) {
      var first = waiting.entrySet().iterator().next();
      String key = first.getKey();
      ArrayDeque<Entry> queue = first.getValue();
      Entry entry = queue.poll();
      waiting.remove(key);
      if (!queue.isEmpty()) {
        waiting.put(key, queue); // to the back: the next group goes first
      }
      if (entry == null) {
        continue;
      }
      entry.queued = false;
      String resource = entry.backend.resourceName();
      if (entries.get(resource) != entry) {
        continue; // retired while waiting
      }
      Path socket =
          dir.resolve(
              entry.backend.socketStem() + "-" + clock.instant().getEpochSecond() + ".sock");
      boolean mustWait =
          entry
              .previous
              .map(p -> p.knownToKubelet() || p.server().socket().equals(socket))
              .orElse(true);
      entry.previous = Optional.empty();
      Optional<CompletableFuture<Void>> previous =
          mustWait ? Optional.ofNullable(stopping.get(resource)) : Optional.empty();
      entry.starting = true;
      if (entry.round == 0) {
        inFlight++;
      } // else: the round whose Register is still out (an older kubelet's) passes to this start
      entry.round = ++entry.rounds;
      try {
        starter.execute(() -> start(entry, previous, socket));
      } catch (RejectedExecutionException e) {
        entry.starting = false; // closing
        release(entry);
      }
    }
  }

  /** Ends the current start-and-register round of {@code entry}, if any. Control thread. */
  private void release(Entry entry) {
    release(entry, entry.round);
  }

  /**
   * Ends round {@code round} of {@code entry} if that is the one it holds: an answer to an older
   * round's Register must not end a newer round. Control thread.
   */
  private void release(Entry entry, long round) {
    if (round != 0 && entry.round == round) {
      entry.round = 0;
      inFlight--;
      pump();
    }
  }

  /**
   * Begins stopping {@code server} now and finishes (termination, socket removal) on the stopper
   * thread. Control thread.
   */
  private void stopLater(Entry entry, ResourceServer server) {
    bySocket.remove(server.endpoint(), entry);
    server.beginStop();
    String resource = entry.backend.resourceName();
    try {
      CompletableFuture<Void> done = CompletableFuture.runAsync(server::stop, stopper);
      stopping.put(resource, done);
      done.whenComplete((v, e) -> stopping.remove(resource, done));
    } catch (RejectedExecutionException e) {
      server.stop(); // closing
    }
  }

  /** Resources grouped approximately by Configuration: the name without its last dash part. */
  private static String groupOf(String resource) {
    int dash = resource.lastIndexOf('-');
    return dash > 0 ? resource.substring(0, dash) : resource;
  }

  /** Starter thread: the old server ends (and its stream with it) before the new one serves. */
  private void start(Entry entry, Optional<CompletableFuture<Void>> previous, Path socket) {
    previous.ifPresent(
        p -> {
          try {
            p.get(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          } catch (ExecutionException | TimeoutException e) {
            LOG.warn(
                "resource {}: previous server still stopping: {}",
                entry.backend.resourceName(),
                e.toString());
          }
        });
    if (closed || entries.get(entry.backend.resourceName()) != entry) {
      try {
        control.execute(() -> started(entry, Optional.empty(), Optional.empty()));
      } catch (RejectedExecutionException e) {
        // closed: nothing was started
      }
      return; // retired or closing: nothing to start
    }
    ResourceServer server =
        new ResourceServer(entry.backend, socket, group, grpcExecutor, this::emit);
    Optional<Exception> failure = Optional.empty();
    try {
      server.start();
    } catch (IOException | RuntimeException e) {
      failure = Optional.of(e);
    }
    Optional<Exception> outcome = failure;
    try {
      control.execute(() -> started(entry, Optional.of(server), outcome));
    } catch (RejectedExecutionException e) {
      server.stop(); // closed meanwhile
    }
  }

  /** Control thread: a start completed (no server when it was skipped). */
  private void started(Entry entry, Optional<ResourceServer> started, Optional<Exception> failure) {
    entry.starting = false;
    String resource = entry.backend.resourceName();
    if (started.isEmpty()) {
      release(entry);
      return;
    }
    ResourceServer server = started.get();
    if (failure.isPresent()) {
      Exception e = failure.get();
      release(entry);
      LOG.error(
          "resource {}: cannot serve on {}: {}; retrying",
          resource,
          server.socket(),
          rootMessage(e));
      emit(new DevicePluginEvent.RegistrationFailed(resource, rootMessage(e)));
      if (!closed && entries.get(resource) == entry) {
        scheduleRetry(entry);
      }
      return;
    }
    if (closed || entries.get(resource) != entry) {
      release(entry);
      stopLater(entry, server); // retired or closed while starting
      return;
    }
    entry.server = server;
    bySocket.put(server.endpoint(), entry);
    entry.registeredGeneration = -1;
    if (!SocketFiles.exists(server.socket())) {
      release(entry);
      startServer(entry); // removed while starting (a kubelet restart): serve again
      return;
    }
    register(entry);
  }

  /** Stops servers, all at once: every shutdown begins before the first is waited for. */
  private static void stopAll(List<ResourceServer> servers) {
    servers.forEach(ResourceServer::beginStop);
    servers.forEach(ResourceServer::stop);
  }

  private void register(Entry entry) {
    if (closed || entry.server == null || !entries.containsKey(entry.backend.resourceName())) {
      release(entry);
      return;
    }
    entry.cancelRetry();
    if (generation == 0 || !SocketFiles.exists(dir.resolve(KUBELET_SOCKET))) {
      release(entry);
      scheduleRetry(entry); // kubelet not (yet) there
      return;
    }
    long g = generation;
    long round = entry.round;
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
            release(entry, round);
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
            emit(new DevicePluginEvent.Registered(resource, endpoint, again));
          }

          @Override
          public void onFailure(Throwable t) {
            release(entry, round);
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
            emit(new DevicePluginEvent.RegistrationFailed(resource, reason));
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
                      if (entry.starting || entry.queued) {
                        return;
                      }
                      if (entry.server == null) {
                        startServer(entry); // registers once serving
                      } else {
                        register(entry);
                      }
                    }),
            delay,
            TimeUnit.MILLISECONDS);
  }

  /** Hands an event to the sink; a failing sink is logged, its bug stays its own. Any thread. */
  private void emit(DevicePluginEvent event) {
    try {
      events.accept(event);
    } catch (RuntimeException e) {
      LOG.warn("event sink failed on {}: {}", event, e.toString());
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

  /** A replaced server and whether the current kubelet knew its endpoint. */
  private record Previous(ResourceServer server, boolean knownToKubelet) {}

  /** Per-resource state; fields written on the control thread only. */
  private static final class Entry {
    final ResourceBackend backend;
    volatile ResourceServer server;
    volatile long registeredGeneration = -1;
    volatile long inFlightGeneration = -1;
    volatile boolean everRegistered;
    boolean starting;
    boolean queued;

    /** The server the queued start replaces, if any. */
    Optional<Previous> previous = Optional.empty();

    /**
     * The start-and-register round this entry holds (one of {@link #IN_FLIGHT}, from start until
     * Register answers), or 0.
     */
    long round;

    long rounds;

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
