package io.jakri.agent.deviceplugin;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import java.io.IOException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Starts and stops resource servers for {@link DevicePluginManager}, off its control thread.
 *
 * <p>Starts run on a small pool of starter threads (as many as cores, 2 to 8), several at a time:
 * gRPC's {@code Server.start()} blocks until the event loop has bound the socket, and an event loop
 * busy with the kubelet's dials would otherwise make a thousand starts queue one behind the other.
 *
 * <p>Stopping a server (retired, or replaced after a kubelet restart) begins at once on the
 * caller's thread (streams end, no new calls); waiting for its termination and removing its socket
 * file run on one stopper thread, so retiring thousands of resources does not hold the control
 * thread for an event-loop round trip each. The stop still under way is kept per resource, so a new
 * server of the same resource can start only after the old one has stopped. Both pools' threads end
 * when idle: the thread count does not grow with resources.
 */
final class Servers {
  private static final Logger LOG = LoggerFactory.getLogger(DevicePluginManager.class);
  private static final int STARTERS =
      Math.min(8, Math.max(2, Runtime.getRuntime().availableProcessors()));
  private static final Duration IDLE = Duration.ofSeconds(10);
  private static final Duration STOP_WAIT = Duration.ofSeconds(5);

  /** How a start ended: no server when it was skipped, else the server and its failure if any. */
  interface Started {
    void accept(Optional<ResourceServer> server, Optional<Exception> failure);
  }

  private final EventLoopGroup group;
  private final Executor grpcExecutor;
  private final Consumer<DevicePluginEvent> events;
  private final ExecutorService starter = pool(STARTERS, "jakri-deviceplugin-start", true);
  private final ExecutorService stopper = pool(1, "jakri-deviceplugin-stop", false);

  /** Set when the agent shuts down: queued stops close connections at once. */
  private volatile boolean hurry;

  private final Map<String, CompletableFuture<Void>> stopping = new ConcurrentHashMap<>();

  /**
   * @param events given to each server (Allocate outcomes, snapshots sent); must not block
   */
  Servers(EventLoopGroup group, Executor grpcExecutor, Consumer<DevicePluginEvent> events) {
    this.group = group;
    this.grpcExecutor = grpcExecutor;
    this.events = events;
  }

  /**
   * On a starter thread: waits for {@code previous} (the old server's stop, so its stream has ended
   * before the new one serves), then, if {@code wanted} still holds, starts a server of {@code
   * backend} on {@code socket}; tells {@code started} on {@code control}.
   *
   * @throws RejectedExecutionException when closing
   */
  void start(
      ResourceBackend backend,
      Path socket,
      Optional<CompletableFuture<Void>> previous,
      BooleanSupplier wanted,
      Executor control,
      Started started) {
    starter.execute(
        () -> {
          previous.ifPresent(p -> awaitStopped(backend.resourceName(), p));
          if (!wanted.getAsBoolean()) {
            try {
              control.execute(() -> started.accept(Optional.empty(), Optional.empty()));
            } catch (RejectedExecutionException e) {
              // closed: nothing was started
            }
            return; // retired or closing: nothing to start
          }
          ResourceServer server = new ResourceServer(backend, socket, group, grpcExecutor, events);
          Optional<Exception> failure = Optional.empty();
          try {
            server.start();
          } catch (IOException | RuntimeException e) {
            failure = Optional.of(e);
            // A server that never served terminates at once; left alone, gRPC's process-wide
            // registry of servers would keep it (and its buffers) until the resource retires.
            server.beginStop();
          }
          Optional<Exception> outcome = failure;
          try {
            control.execute(() -> started.accept(Optional.of(server), outcome));
          } catch (RejectedExecutionException e) {
            server.stop(); // closed meanwhile
          }
        });
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

  /** Begins stopping {@code resource}'s {@code server} now and finishes on the stopper thread. */
  void stopLater(String resource, ResourceServer server) {
    server.beginStop();
    try {
      CompletableFuture<Void> done = CompletableFuture.runAsync(() -> server.stop(hurry), stopper);
      stopping.put(resource, done);
      done.whenComplete((v, e) -> stopping.remove(resource, done));
    } catch (RejectedExecutionException e) {
      server.stop(); // closing
    }
  }

  /** The stop of a server of {@code resource} still under way, if any. */
  Optional<CompletableFuture<Void>> stopping(String resource) {
    return Optional.ofNullable(stopping.get(resource));
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
              stopQuietly(servers.get(i));
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

  /** Threads that stop the servers at shutdown: see {@link #stopAll}. */
  static final int SHUTDOWN_STOPPERS = 64;

  private static void stopQuietly(ResourceServer server) {
    try {
      server.stop(true);
    } catch (RuntimeException e) {
      LOG.warn("resource {}: stop failed: {}", server.backend().resourceName(), e.toString());
    }
  }

  /** Takes no new starts and waits (up to 30 s) for the starts under way. */
  void closeStarts() {
    awaitShutdown(starter, "device-plugin servers were still starting after 30 s");
  }

  /** From now on, stops close connections at once (the agent is shutting down). */
  void hurry() {
    hurry = true;
  }

  /**
   * Waits (up to 30 s) for the stops under way: their sockets are gone when this returns. Called
   * after {@link #hurry}, so stops still queued no longer wait for the kubelet.
   */
  void closeStops() {
    awaitShutdown(stopper, "device-plugin servers were still stopping after 30 s");
  }

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
}
