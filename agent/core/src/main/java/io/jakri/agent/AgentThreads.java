package io.jakri.agent;

import io.grpc.netty.shaded.io.netty.channel.EventLoopGroup;
import io.grpc.netty.shaded.io.netty.channel.epoll.EpollEventLoopGroup;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The threads the agent's parts share, whatever the number of devices: one Netty event loop group
 * (2 threads) for every gRPC server and client, 8 gRPC call threads, a 2-thread scheduler for the
 * agent's timers, and one-thread timers of their own for the device-plugin manager (ListAndWatch
 * updates are published on it) and the slot reclaimer. All daemon threads; timers drop delayed
 * tasks on shutdown but run what is due.
 */
final class AgentThreads implements AutoCloseable {

  final EventLoopGroup group = new EpollEventLoopGroup(2, named("jakri-netty"));
  final ExecutorService grpc = Executors.newFixedThreadPool(8, named("jakri-grpc"));
  final ScheduledExecutorService scheduler = timer(2, "jakri-timer");
  final ScheduledExecutorService devicePluginTimer = timer(1, "jakri-deviceplugin-timer");
  final ScheduledExecutorService reclaimTimer = timer(1, "jakri-reclaim-timer");

  /** Daemon threads named {@code <name>-<n>}. */
  static ThreadFactory named(String name) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, name + "-" + n.incrementAndGet());
      t.setDaemon(true);
      // Not the creator's: a plugin's thread that makes the pool grow must not lend it its loader.
      t.setContextClassLoader(AgentThreads.class.getClassLoader());
      return t;
    };
  }

  private static ScheduledExecutorService timer(int threads, String name) {
    ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(threads, named(name));
    timer.setRemoveOnCancelPolicy(true);
    // On shutdown, drop timers still in the future (grace periods, sweeps) but run what is due.
    timer.setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    return timer;
  }

  /**
   * Stops every thread: the scheduler gets 5 s for queued clean-up (e.g. a handler's slow close
   * handed to it), the event loops 2 s of quiet.
   */
  @Override
  public void close() {
    grpc.shutdown();
    reclaimTimer.shutdownNow();
    devicePluginTimer.shutdownNow();
    scheduler.shutdown();
    try {
      if (!scheduler.awaitTermination(5, TimeUnit.SECONDS)) {
        scheduler.shutdownNow();
      }
    } catch (InterruptedException e) {
      scheduler.shutdownNow();
      Thread.currentThread().interrupt();
    }
    try {
      group.shutdownGracefully(0, 2, TimeUnit.SECONDS).await(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
