package io.jakri.agent.deviceplugin;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.jakri.agent.deviceplugin.ResourceServer.SocketFiles;
import io.jakri.agent.deviceplugin.ResourceServer.SocketNames;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Function;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Serves one device-plugin gRPC server per resource and keeps each registered with the kubelet
 * ({@link KubeletRegistrar}). All state changes run on one control thread; public methods may be
 * called from any thread and return at once.
 *
 * <p>A resource's server is serving before Register is sent (the kubelet dials it and calls
 * GetDevicePluginOptions before answering Register). Servers start off the control thread, several
 * at a time on 2 to 8 starter threads (as many as cores): gRPC's {@code Server.start()} blocks
 * until the event loop has bound the socket, and an event loop busy with the kubelet's dials would
 * otherwise make a thousand starts queue one behind the other. At most {@link #IN_FLIGHT}
 * start-and-register rounds are under way at once; the others wait in a {@link StartQueue}, taken
 * in turn from each Configuration, so a handler reporting thousands of devices neither floods the
 * kubelet (which dials, checkpoints and answers every registration while it also admits pods) nor
 * keeps another Configuration's resources waiting behind all of its own. Within a reserve of the
 * open-files limit, starts wait ({@link ServerStartPause}).
 *
 * <p>Stopping a server (retired, or replaced) begins at once on the control thread (streams end, no
 * new calls); its termination and socket removal run on one stopper thread, so retiring thousands
 * of resources does not hold the control thread for an event-loop round trip each. A new server of
 * the same resource starts only after the old one has stopped (its stream has ended before the
 * replacement registers). Both pools' threads end when idle. When {@code kubelet.sock} is created
 * anew (a kubelet restart deletes every socket) or one of our sockets disappears, the directory
 * watch and a periodic check ({@link KubeletRegistrar.Resync}) serve and register the affected
 * resources again.
 *
 * <p>Threading: the timer passed in is used for this manager's own delays only (publish coalescing,
 * retry backoff, the periodic consistency check): give it one not shared with work that may block
 * or queue for long, since ListAndWatch updates are published on it.
 */
public final class DevicePluginManager implements Advertiser, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);
  static final Duration CONSISTENCY_CHECK = Duration.ofSeconds(5);
  private static final Duration COALESCE = Duration.ofMillis(5);

  /**
   * Start-and-register rounds under way at once (see the class comment). 64 keeps both the agent
   * and the kubelet busy: with 16, each round's hand-offs (starter, event loop, control thread; the
   * kubelet's dial and options call) mostly found their threads parked, and waking them cost the
   * agent and the emulator more CPU than the same registrations sent 64 at a time (the kubelet
   * restart figures are in bench/README.md, "64 rounds instead of 16"). HandlerContainmentIT (a
   * 20,000-device flood beside pods being admitted) passes with 64 and 128.
   */
  static final int IN_FLIGHT = 64;

  /** Threads that stop the servers at shutdown: see {@link #stopAll}. */
  static final int SHUTDOWN_STOPPERS = 64;

  private static final int STARTERS =
      Math.min(8, Math.max(2, Runtime.getRuntime().availableProcessors()));
  private static final Duration IDLE = Duration.ofSeconds(10);
  private static final Duration STOP_WAIT = Duration.ofSeconds(5);

  private final Path dir;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final ExecutorService control;
  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private final ExecutorService starter = pool(STARTERS, "jakri-deviceplugin-start", true);
  private final ExecutorService stopper = pool(1, "jakri-deviceplugin-stop", false);

  /** The stop under way of each resource's replaced or retired server. */
  private final Map<String, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();

  /** Set when the agent shuts down: queued stops close connections at once. */
  private volatile boolean hurry;

  private final Map<String, ServedResource> entries = new ConcurrentHashMap<>();
  private final Consumer<DevicePluginReport> reports;
  private final KubeletRegistrar kubelet;
  private final KubeletRegistrar.Resync resync;
  private final Coalescer<ServedResource> publishes;

  // Confined to the control thread.
  private ScheduledFuture<?> periodic;
  private final StartQueue queue = new StartQueue(IN_FLIGHT);
  private final Map<String, ServedResource> bySocket = new HashMap<>();
  private final ServerStartPause hold;
  private volatile boolean closed;

  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock) {
    this(dir, group, grpcExecutor, scheduler, clock, report -> {});
  }

  /**
   * @param reports told what happens to the served resources (see {@link DevicePluginReport} for
   *     the threads); must not block
   */
  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock,
      Consumer<DevicePluginReport> reports) {
    this(dir, group, grpcExecutor, scheduler, clock, reports, OpenFiles.ofProcess());
  }

  /**
   * @param files the process's open files and their limit: no server starts within a reserve of the
   *     limit ({@link ServerStartPause.FileHeadroom})
   */
  public DevicePluginManager(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      ScheduledExecutorService scheduler,
      Clock clock,
      Consumer<DevicePluginReport> reports,
      OpenFiles files) {
    this.dir = dir;
    this.reports = reports;
    this.scheduler = scheduler;
    this.clock = clock;
    this.control =
        Executors.newSingleThreadExecutor(
            r -> {
              Thread t = new Thread(r, "jakri-deviceplugin-control");
              t.setDaemon(true);
              return t;
            });
    this.hold =
        new ServerStartPause(
            new ServerStartPause.FileHeadroom(files, clock),
            scheduler,
            control,
            this::pump,
            this::emit);
    this.publishes =
        new Coalescer<>(scheduler, COALESCE, e -> e.publishPending, ServedResource::publish);
    this.group = group;
    this.grpcExecutor = grpcExecutor;
    this.kubelet =
        new KubeletRegistrar(
            dir,
            group,
            grpcExecutor,
            entries,
            scheduler,
            control,
            () -> closed,
            this::release,
            this::startServer,
            this::queueRegister,
            this::emit);
    this.resync = new KubeletRegistrar.Resync(kubelet, bySocket);
  }

  /** Starts watching the device-plugin directory (creating it when missing). */
  public void start() {
    control.execute(() -> kubelet.watch(resync));
    periodic =
        scheduler.scheduleWithFixedDelay(
            resync::request,
            CONSISTENCY_CHECK.toMillis(),
            CONSISTENCY_CHECK.toMillis(),
            TimeUnit.MILLISECONDS);
  }

  @Override
  public void serve(ResourceBackend backend) {
    control.execute(
        () -> {
          if (closed || entries.containsKey(backend.resourceName())) {
            return;
          }
          ServedResource entry = new ServedResource(backend);
          entries.put(backend.resourceName(), entry);
          startServer(entry); // registers once serving
        });
  }

  /** Stops serving a resource for good: ends its streams and removes its socket. */
  @Override
  public void retire(String resource) {
    control.execute(
        () -> {
          ServedResource entry = entries.remove(resource);
          if (entry != null) {
            entry.cancelRetry();
            queue.remove(entry);
            if (queue.size() == 0) {
              hold.drained(); // the last one waiting for files was retired
            }
            if (entry.server != null) {
              stopLater(entry, entry.server);
              entry.server = null;
            }
            LOG.info("resource {}: retired", resource);
            emit(new DevicePluginReport.Retired(resource));
          }
        });
  }

  /**
   * Pushes the resource's current devices to the kubelet if they changed. Any thread. Refreshes
   * that arrive within {@link #COALESCE} of each other are published once ({@link Coalescer}; a
   * class resource with a thousand members would otherwise send a thousand growing snapshots while
   * they appear).
   */
  @Override
  public void refresh(String resource) {
    ServedResource entry = entries.get(resource);
    if (entry != null) {
      publishes.request(entry);
    }
  }

  /** The resources served now. */
  public Set<String> served() {
    return new TreeSet<>(entries.keySet());
  }

  /** The socket of a served resource, if it is being served. */
  public Optional<Path> socketOf(String resource) {
    ServedResource entry = entries.get(resource);
    return entry == null || entry.server == null
        ? Optional.empty()
        : Optional.of(entry.server.socket());
  }

  /** Whether the kubelet socket exists and the last registration round reached it. */
  public boolean kubeletReachable() {
    return kubelet.present();
  }

  /** Whether every served resource is registered with the current kubelet. */
  public boolean allRegistered() {
    long current = kubelet.generation();
    return current > 0
        && entries.values().stream().allMatch(e -> e.registeredGeneration == current);
  }

  @Override
  public void close() {
    closed = true;
    hurry = true;
    if (periodic != null) {
      periodic.cancel(false);
    }
    // Starts in flight finish first; their completions (on the control thread) see closed and
    // stop what they started.
    awaitShutdown(starter, "device-plugin servers were still starting after 30 s");
    try {
      control
          .submit(
              () -> {
                List<ResourceServer> running = new ArrayList<>();
                for (ServedResource entry : entries.values()) {
                  entry.cancelRetry();
                  if (entry.server != null) {
                    running.add(entry.server);
                  }
                }
                entries.clear();
                bySocket.clear();
                queue.clear();
                stopAll(running, Duration.ofSeconds(20));
                kubelet.close();
              })
          .get(30, TimeUnit.SECONDS);
    } catch (Exception e) {
      LOG.warn("device plugins did not stop cleanly: {}", e.toString());
    }
    control.shutdown();
    // Retired servers still stopping: their sockets are gone before close returns.
    awaitShutdown(stopper, "device-plugin servers were still stopping after 30 s");
  }

  // ---- control thread ----

  /**
   * Stops the entry's current server (if any) and queues the start of a new one; when it is
   * serving, registers it. At most one start per entry is queued or in flight.
   */
  private void startServer(ServedResource entry) {
    if (entry.starting || (entry.queued && !entry.registerOnly)) {
      return;
    }
    entry.registerOnly = false; // a Register queued for the old server becomes this start
    ResourceServer old = entry.server;
    entry.previous = Optional.empty();
    if (old != null) {
      // Shutdown begins now for every server of a restart round (whether the new one waits for its
      // end: ServedResource#replacing).
      entry.replacing(old, kubelet.generation());
      stopLater(entry, old);
    }
    entry.server = null;
    queue.add(entry);
    pump();
  }

  /**
   * Queues a Register of {@code entry}'s serving server (a retry, or a new kubelet), to be sent
   * when its turn comes within {@link #IN_FLIGHT} rounds. A resource that already holds a round
   * (its Register to an older kubelet is still out) registers at once in that round.
   */
  private void queueRegister(ServedResource entry) {
    if (closed || entry.starting || entry.queued || entries.get(entry.resource()) != entry) {
      return; // a queued or running start registers when serving
    }
    if (entry.round != 0) {
      kubelet.register(entry);
      return;
    }
    entry.registerOnly = true;
    queue.add(entry);
    pump();
  }

  /** Starts queued servers while fewer than {@link #IN_FLIGHT} rounds are under way; fair. */
  private void pump() {
    while (!closed && queue.canTake()) {
      if (!hold.mayStart(queue.inFlight(), queue.size())) {
        return;
      }
      Optional<ServedResource> next = queue.next();
      if (next.isEmpty()) {
        break;
      }
      ServedResource entry = next.get();
      String resource = entry.backend.resourceName();
      if (entries.get(resource) != entry) {
        entry.registerOnly = false;
        continue; // retired while waiting
      }
      if (entry.registerOnly) {
        entry.registerOnly = false;
        if (entry.server != null) {
          if (entry.round == 0) {
            queue.acquire();
          }
          entry.round = ++entry.rounds;
          kubelet.register(entry); // ends the round when the kubelet answers
          continue;
        }
      }
      Path socket =
          SocketNames.socket(dir, entry.backend.socketStem(), clock.instant().getEpochSecond());
      Optional<CompletableFuture<Void>> previous =
          entry.mustWaitForPrevious(socket)
              ? Optional.ofNullable(stopping.get(resource))
              : Optional.empty();
      entry.starting = true;
      if (entry.round == 0) {
        queue.acquire();
      } // else: the round whose Register is still out (an older kubelet's) passes to this start
      entry.round = ++entry.rounds;
      try {
        starter.execute(() -> start(entry, socket, previous));
      } catch (RejectedExecutionException e) {
        entry.starting = false; // closing
        release(entry, entry.round);
      }
    }
    if (queue.size() == 0) {
      hold.drained();
    }
  }

  /**
   * Ends round {@code round} of {@code entry} if that is the one it holds: an answer to an older
   * round's Register must not end a newer round.
   */
  private void release(ServedResource entry, long round) {
    if (round != 0 && entry.round == round) {
      entry.round = 0;
      queue.release();
      pump();
    }
  }

  /** Begins stopping {@code server}; termination and socket removal finish on the stopper. */
  private void stopLater(ServedResource entry, ResourceServer server) {
    bySocket.remove(server.endpoint(), entry);
    server.beginStop();
    String resource = entry.resource();
    try {
      CompletableFuture<Void> done = CompletableFuture.runAsync(() -> server.stop(hurry), stopper);
      stopping.put(resource, done);
      done.whenComplete((v, e) -> stopping.remove(resource, done));
    } catch (RejectedExecutionException e) {
      server.stop(); // closing
    }
  }

  /**
   * Starter thread: waits for {@code previous} (the old server's stop, so its stream has ended
   * before the new one serves), then, if {@code entry} is still served, starts its server on {@code
   * socket}; {@link #started} completes it on the control thread.
   */
  private void start(
      ServedResource entry, Path socket, Optional<CompletableFuture<Void>> previous) {
    String resource = entry.resource();
    previous.ifPresent(p -> awaitStopped(resource, p));
    if (closed || entries.get(resource) != entry) {
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
      // A server that never served terminates at once; left alone, gRPC's process-wide registry
      // of servers would keep it (and its buffers) until the resource retires.
      server.beginStop();
    }
    Optional<Exception> outcome = failure;
    try {
      control.execute(() -> started(entry, Optional.of(server), outcome));
    } catch (RejectedExecutionException e) {
      server.stop(); // closed meanwhile
    }
  }

  private static void awaitStopped(String resource, CompletableFuture<Void> stop) {
    try {
      stop.get(STOP_WAIT.toMillis(), TimeUnit.MILLISECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    } catch (ExecutionException | TimeoutException e) {
      LOG.warn("resource {}: previous server still stopping: {}", resource, e.toString());
    }
  }

  /** A start completed (no server when it was skipped). */
  private void started(
      ServedResource entry, Optional<ResourceServer> started, Optional<Exception> failure) {
    entry.starting = false;
    String resource = entry.backend.resourceName();
    if (started.isEmpty()) {
      release(entry, entry.round);
      return;
    }
    ResourceServer server = started.get();
    if (failure.isPresent()) {
      Exception e = failure.get();
      release(entry, entry.round);
      LOG.error(
          "resource {}: cannot serve on {}: {}; retrying",
          resource,
          server.socket(),
          KubeletRegistrar.rootMessage(e));
      emit(new DevicePluginReport.RegistrationFailed(resource, KubeletRegistrar.rootMessage(e)));
      if (!closed && entries.get(resource) == entry) {
        kubelet.retryLater(entry);
      }
      return;
    }
    if (closed || entries.get(resource) != entry) {
      release(entry, entry.round);
      stopLater(entry, server); // retired or closed while starting
      return;
    }
    entry.server = server;
    bySocket.put(server.endpoint(), entry);
    entry.registeredGeneration = -1;
    if (!SocketFiles.exists(server.socket())) {
      release(entry, entry.round);
      startServer(entry); // removed while starting (a kubelet restart): serve again
      return;
    }
    kubelet.register(entry);
  }

  /** Hands a report to the sink; a failing sink is logged, its bug stays its own. Any thread. */
  private void emit(DevicePluginReport report) {
    try {
      reports.accept(report);
    } catch (RuntimeException e) {
      LOG.warn("report sink failed on {}: {}", report, e.toString());
    }
  }

  /**
   * Stops servers as the agent shuts down: connections are closed without waiting for the kubelet,
   * and {@link #SHUTDOWN_STOPPERS} threads (the caller's one of them) stop them side by side. A
   * server's stop waits for the event loop to close its listening socket (gRPC's {@code shutdown()}
   * blocks until then): one thread stopping 10,000 servers one after the other left the event loops
   * idle between its requests and took 5 to 8 s on the loaded 2-core bench machine (JFR: the loops
   * mostly in {@code epoll_wait}), while the loops close the sockets of many servers per wake-up
   * when many are asked at once. Returns when every server has stopped, or after {@code max}.
   */
  static void stopAll(List<ResourceServer> servers, Duration max) {
    int threads = Math.min(SHUTDOWN_STOPPERS, servers.size());
    if (threads == 0) {
      return;
    }
    AtomicInteger next = new AtomicInteger();
    CountDownLatch done = new CountDownLatch(threads);
    Runnable stopper =
        () -> {
          try {
            for (int i = next.getAndIncrement(); i < servers.size(); i = next.getAndIncrement()) {
              ResourceServer server = servers.get(i);
              try {
                server.stop(true);
              } catch (RuntimeException e) {
                LOG.warn(
                    "resource {}: stop failed: {}", server.backend().resourceName(), e.toString());
              }
            }
          } finally {
            done.countDown();
          }
        };
    for (int t = 1; t < threads; t++) {
      Thread thread = new Thread(stopper, "jakri-deviceplugin-stop-all-" + t);
      thread.setDaemon(true);
      thread.start();
    }
    stopper.run();
    try {
      if (!done.await(max.toMillis(), TimeUnit.MILLISECONDS)) {
        LOG.warn("device-plugin servers were still stopping after {} s", max.toSeconds());
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** Takes no new tasks and waits up to 30 s for those under way. */
  private static void awaitShutdown(ExecutorService pool, String late) {
    pool.shutdown();
    try {
      if (!pool.awaitTermination(30, TimeUnit.SECONDS)) {
        LOG.warn(late);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static ExecutorService pool(int threads, String name, boolean numbered) {
    AtomicInteger count = new AtomicInteger();
    ThreadFactory factory =
        r -> {
          Thread t = new Thread(r, numbered ? name + "-" + count.incrementAndGet() : name);
          t.setDaemon(true);
          return t;
        };
    ThreadPoolExecutor pool =
        new ThreadPoolExecutor(
            threads,
            threads,
            IDLE.toMillis(),
            TimeUnit.MILLISECONDS,
            new LinkedBlockingQueue<>(),
            factory);
    pool.allowCoreThreadTimeOut(true);
    return pool;
  }

  /**
   * Runs an action for an item once per burst of requests: the first request schedules it {@code
   * window} later on the scheduler, and requests until it runs join that run. Each item has its own
   * pending flag. Thread-safe.
   */
  static final class Coalescer<T> {
    private final ScheduledExecutorService scheduler;
    private final long windowNanos;
    private final Function<T, AtomicBoolean> pending;
    private final Consumer<T> action;

    /**
     * @param pending the item's flag, true while a run is scheduled
     * @param action run on the scheduler's thread
     */
    Coalescer(
        ScheduledExecutorService scheduler,
        Duration window,
        Function<T, AtomicBoolean> pending,
        Consumer<T> action) {
      this.scheduler = scheduler;
      this.windowNanos = window.toNanos();
      this.pending = pending;
      this.action = action;
    }

    /** Runs the action for {@code item} after the window, unless a run is already scheduled. */
    void request(T item) {
      AtomicBoolean flag = pending.apply(item);
      if (flag.compareAndSet(false, true)) {
        scheduler.schedule(
            () -> {
              flag.set(false);
              action.accept(item);
            },
            windowNanos,
            TimeUnit.NANOSECONDS);
      }
    }
  }

  /**
   * The process's open files and its limit on them ({@code RLIMIT_NOFILE}): the boundary {@link
   * ServerStartPause.FileHeadroom} reads. Either may be unknown (not a Unix JVM).
   */
  public interface OpenFiles {

    /**
     * Files (descriptors) open now. Costs a directory listing of {@code /proc/self/fd} on Linux.
     */
    OptionalLong open();

    /** The most files the process may have open. Cheap. */
    OptionalLong limit();

    /** This process's, as the JVM reports them. */
    static OpenFiles ofProcess() {
      var unix =
          ManagementFactory.getOperatingSystemMXBean()
                  instanceof com.sun.management.UnixOperatingSystemMXBean u
              ? u
              : null;
      return new OpenFiles() {
        @Override
        public OptionalLong open() {
          return unix == null ? OptionalLong.empty() : known(unix.getOpenFileDescriptorCount());
        }

        @Override
        public OptionalLong limit() {
          return unix == null ? OptionalLong.empty() : known(unix.getMaxFileDescriptorCount());
        }
      };
    }

    private static OptionalLong known(long value) {
      return value >= 0 ? OptionalLong.of(value) : OptionalLong.empty();
    }
  }
}
