package io.jakri.agent.deviceplugin;

import com.google.common.util.concurrent.FutureCallback;
import com.google.common.util.concurrent.Futures;
import io.grpc.ManagedChannel;
import io.grpc.netty.shaded.io.grpc.netty.NettyChannelBuilder;
import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollDomainSocketChannel;
import io.grpc.netty.shaded.io.netty.channel.unix.DomainSocketAddress;
import io.jakri.agent.deviceplugin.ResourceServer.SocketFiles;
import io.jakri.kubelet.v1beta1.Empty;
import io.jakri.kubelet.v1beta1.RegisterRequest;
import io.jakri.kubelet.v1beta1.RegistrationGrpc;
import java.io.IOException;
import java.nio.file.ClosedWatchServiceException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardWatchEventKinds;
import java.nio.file.WatchEvent;
import java.nio.file.WatchKey;
import java.nio.file.WatchService;
import java.time.Duration;
import java.util.HashSet;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalLong;
import java.util.Set;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import java.util.function.ObjLongConsumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The kubelet's Registration service as {@link DevicePluginManager} sees it: {@code kubelet.sock}
 * in the device-plugin directory, which kubelet is behind it (a generation, new whenever the socket
 * file is created anew: a kubelet restart deletes every socket and listens again), and Register,
 * retried with backoff (50 ms doubling to 5 s) while {@code kubelet.sock} is missing or refuses. A
 * Register answered by an older kubelet, or for a resource retired meanwhile, changes nothing: a
 * later round handles it. It also watches the device-plugin directory (inotify) for the manager's
 * {@link Resync}. Confined to the manager's control thread (answers are handled there too), except
 * {@link #generation()}.
 */
final class KubeletRegistrar {
  static final String KUBELET_SOCKET = "kubelet.sock";
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);
  private static final String VERSION = "v1beta1";
  private static final Duration REGISTER_DEADLINE = Duration.ofSeconds(15);
  private static final Duration MIN_BACKOFF = Duration.ofMillis(50);
  private static final Duration MAX_BACKOFF = Duration.ofSeconds(5);

  private final Path dir;
  private final Path socket;
  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private final Map<String, ServedResource> entries;
  private final ScheduledExecutorService scheduler;
  private final Executor control;
  private final BooleanSupplier closed;
  private final ObjLongConsumer<ServedResource> release;
  private final Consumer<ServedResource> serveAgain;
  private final Consumer<ServedResource> registerAgain;
  private final Consumer<DevicePluginReport> reports;
  private Object key;
  private volatile long generation;
  private ManagedChannel channel;
  private WatchService watcher;

  /**
   * @param entries the served resources by resource name
   * @param release ends the given start-and-register round of a resource, if it is the one it holds
   * @param serveAgain starts a new server for a resource; it registers once serving
   * @param registerAgain queues a Register of a resource's current server: it waits its turn among
   *     every resource waiting for a round, fairly across Configurations, within the bound of
   *     rounds in flight
   * @param reports must not throw
   */
  KubeletRegistrar(
      Path dir,
      EventLoopGroup group,
      Executor grpcExecutor,
      Map<String, ServedResource> entries,
      ScheduledExecutorService scheduler,
      Executor control,
      BooleanSupplier closed,
      ObjLongConsumer<ServedResource> release,
      Consumer<ServedResource> serveAgain,
      Consumer<ServedResource> registerAgain,
      Consumer<DevicePluginReport> reports) {
    this.dir = dir;
    this.socket = dir.resolve(KUBELET_SOCKET);
    this.group = group;
    this.grpcExecutor = grpcExecutor;
    this.entries = entries;
    this.scheduler = scheduler;
    this.control = control;
    this.closed = closed;
    this.release = release;
    this.serveAgain = serveAgain;
    this.registerAgain = registerAgain;
    this.reports = reports;
  }

  /** The current kubelet's generation: 0 before any kubelet socket was seen. Any thread. */
  long generation() {
    return generation;
  }

  /** Whether the kubelet socket exists now. */
  boolean present() {
    return SocketFiles.exists(socket);
  }

  /**
   * Checks whether the kubelet socket is a new file since the last check; if so, the generation
   * goes up (the connection to the previous kubelet is dropped) and the new one is returned.
   */
  OptionalLong checkForNewKubelet() {
    Optional<Object> current = SocketFiles.key(socket);
    if (current.isEmpty() || current.get().equals(key)) {
      return OptionalLong.empty();
    }
    key = current.get();
    generation++;
    disconnect();
    return OptionalLong.of(generation);
  }

  /** Sends Register for {@code entry}'s current server, or schedules a retry. */
  void register(ServedResource entry) {
    if (closed.getAsBoolean()
        || entry.server == null
        || !entries.containsKey(entry.backend.resourceName())) {
      release.accept(entry, entry.round);
      return;
    }
    entry.cancelRetry();
    long g = generation;
    if (g == 0 || !present()) {
      release.accept(entry, entry.round);
      retryLater(entry); // kubelet not (yet) there
      return;
    }
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
            release.accept(entry, round);
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
            reports.accept(new DevicePluginReport.Registered(resource, endpoint, again));
          }

          @Override
          public void onFailure(Throwable t) {
            release.accept(entry, round);
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
            reports.accept(new DevicePluginReport.RegistrationFailed(resource, reason));
            retryLater(entry);
          }
        },
        this::onControl);
  }

  /**
   * Runs a Register answer on the control thread; an answer that arrives after the agent stopped
   * (the control executor is shut down) no longer matters and is dropped, instead of Guava logging
   * the rejection with a stack trace at ERROR.
   */
  private void onControl(Runnable task) {
    try {
      control.execute(task);
    } catch (RejectedExecutionException e) {
      LOG.debug("a Register answer arrived after shutdown; dropped");
    }
  }

  /**
   * After the entry's backoff, serves it again (when it has no server) or queues its Register,
   * unless it was retired or a start is already under way. Retries go through the same fair,
   * bounded queue as first registrations: sent straight to the kubelet, thousands of retries of one
   * big Configuration piled up at a slow kubelet, each ran into the Register deadline and was
   * retried again, and a new small Configuration waited behind them all.
   */
  void retryLater(ServedResource entry) {
    entry.cancelRetry();
    long delay =
        Math.min(MAX_BACKOFF.toMillis(), MIN_BACKOFF.toMillis() << Math.min(entry.attempts, 10));
    entry.attempts++;
    entry.retry =
        scheduler.schedule(
            () ->
                control.execute(
                    () -> {
                      if (entries.get(entry.backend.resourceName()) != entry
                          || entry.starting
                          || entry.queued) {
                        return;
                      }
                      if (entry.server == null) {
                        serveAgain.accept(entry); // registers once serving
                      } else {
                        registerAgain.accept(entry); // never around the queue: see #retryLater
                      }
                    }),
            delay,
            TimeUnit.MILLISECONDS);
  }

  /** The message of {@code t}, with its root cause when that is another exception. */
  static String rootMessage(Throwable t) {
    Throwable root = t;
    while (root.getCause() != null && root.getCause() != root) {
      root = root.getCause();
    }
    String message = t.getMessage() == null ? t.toString() : t.getMessage();
    return root == t ? message : message + " (" + root + ")";
  }

  /**
   * Watches the device-plugin directory (creating it when missing): the kubelet socket created or
   * deleted, or a lost event, calls for a full {@code resync}; deleted sockets only for the
   * resources serving on them. Our own sockets appearing are not news. One watch thread; when the
   * directory cannot be watched, tried again after {@link DevicePluginManager#CONSISTENCY_CHECK};
   * each attempt ends with a full resync.
   */
  void watch(Resync resync) {
    try {
      Files.createDirectories(dir);
      watcher = FileSystems.getDefault().newWatchService();
      dir.register(
          watcher, StandardWatchEventKinds.ENTRY_CREATE, StandardWatchEventKinds.ENTRY_DELETE);
      WatchService service = watcher;
      Thread watchThread = new Thread(() -> watchLoop(service, resync), "jakri-deviceplugin-watch");
      watchThread.setDaemon(true);
      watchThread.start();
      LOG.info("watching device-plugin directory {}", dir);
    } catch (IOException | RuntimeException e) {
      Duration retry = DevicePluginManager.CONSISTENCY_CHECK;
      LOG.error(
          "device-plugin directory {} cannot be watched ({}); retrying in {}s",
          dir,
          e.toString(),
          retry.toSeconds());
      stopWatching();
      scheduler.schedule(
          () -> control.execute(() -> watch(resync)), retry.toMillis(), TimeUnit.MILLISECONDS);
    }
    resync.run();
  }

  private void watchLoop(WatchService service, Resync resync) {
    while (!closed.getAsBoolean()) {
      WatchKey key;
      try {
        key = service.take();
      } catch (InterruptedException | ClosedWatchServiceException e) {
        return;
      }
      boolean everything = false;
      Set<String> deleted = new HashSet<>();
      for (WatchEvent<?> event : key.pollEvents()) {
        // A deleted socket calls only for a check of the resource serving on it: retiring
        // thousands of resources deletes thousands of our own sockets, and a full check per
        // deletion would stat every socket each time.
        String name = String.valueOf(event.context());
        if (event.kind() == StandardWatchEventKinds.OVERFLOW || KUBELET_SOCKET.equals(name)) {
          everything = true;
        } else if (event.kind() == StandardWatchEventKinds.ENTRY_DELETE) {
          deleted.add(name);
        }
      }
      if (everything) {
        resync.request();
      } else if (!deleted.isEmpty() && !closed.getAsBoolean()) {
        control.execute(() -> resync.socketsDeleted(deleted));
      }
      if (!key.reset()) {
        LOG.warn("device-plugin directory {} is no longer watched; re-creating the watch", dir);
        control.execute(() -> watch(resync));
        return;
      }
    }
  }

  /** Drops the connection to the kubelet and stops watching. */
  void close() {
    disconnect();
    stopWatching();
  }

  /** Drops the connection (a later Register dials again). */
  private void disconnect() {
    if (channel != null) {
      channel.shutdownNow();
    }
    channel = null;
  }

  private void stopWatching() {
    if (watcher != null) {
      try {
        watcher.close();
      } catch (IOException e) {
        LOG.debug("closing watch service: {}", e.toString());
      }
      watcher = null;
    }
  }

  private ManagedChannel channel() {
    if (channel == null) {
      channel =
          NettyChannelBuilder.forAddress(new DomainSocketAddress(socket.toString()))
              .channelType(EpollDomainSocketChannel.class)
              .eventLoopGroup(group)
              .executor(grpcExecutor)
              .usePlaintext()
              .build();
    }
    return channel;
  }

  /**
   * Brings {@link DevicePluginManager}'s resources in line with the device-plugin directory: a new
   * kubelet (its socket created anew), our sockets that vanished (served again on fresh sockets)
   * and registrations the current kubelet lacks. Resources whose start is queued or under way are
   * left alone: they register (or are served again) when the start completes. Idempotent. Confined
   * to the manager's control thread, except {@link #request()}.
   */
  static final class Resync {

    private final KubeletRegistrar kubelet;
    private final Map<String, ServedResource> bySocket;
    private final AtomicBoolean pending = new AtomicBoolean();

    /**
     * @param kubelet whose served resources, control executor and callbacks this uses
     * @param bySocket the served resources by their current socket's file name (control thread)
     */
    Resync(KubeletRegistrar kubelet, Map<String, ServedResource> bySocket) {
      this.kubelet = kubelet;
      this.bySocket = bySocket;
    }

    /** Runs {@link #run()} on the control executor; requests before it runs join it. Any thread. */
    void request() {
      if (!kubelet.closed.getAsBoolean() && pending.compareAndSet(false, true)) {
        kubelet.control.execute(
            () -> {
              pending.set(false);
              run();
            });
      }
    }

    /**
     * Serves again the resources whose socket files (by file name) were deleted. Control thread.
     */
    void socketsDeleted(Set<String> names) {
      if (kubelet.closed.getAsBoolean()) {
        return;
      }
      for (String name : names) {
        ServedResource entry = bySocket.get(name);
        if (entry == null
            || entry.starting
            || entry.queued
            || entry.server == null
            || kubelet.entries.get(entry.backend.resourceName()) != entry
            || SocketFiles.exists(entry.server.socket())) {
          continue;
        }
        LOG.debug(
            "resource {}: socket {} vanished; serving again", entry.backend.resourceName(), name);
        kubelet.serveAgain.accept(entry);
        entry.registeredGeneration = -1;
      }
    }

    /** Brings reality in line: kubelet generation, our sockets, registrations. Control thread. */
    void run() {
      if (kubelet.closed.getAsBoolean()) {
        return;
      }
      OptionalLong restarted = kubelet.checkForNewKubelet();
      if (restarted.isPresent()) {
        long g = restarted.getAsLong();
        LOG.info("kubelet socket appeared (generation {}); registering every resource", g);
        kubelet.reports.accept(new DevicePluginReport.KubeletRestarted(g));
      }
      long generation = kubelet.generation();
      for (ServedResource entry : kubelet.entries.values()) {
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
          kubelet.serveAgain.accept(entry);
          entry.registeredGeneration = -1;
          continue;
        }
        if (entry.registeredGeneration != generation && entry.inFlightGeneration != generation) {
          kubelet.registerAgain.accept(entry);
        }
      }
    }
  }
}
