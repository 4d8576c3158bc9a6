package io.jakri.agent.discovery;

import io.jakri.handler.DiscoveryHandler;
import io.jakri.logging.DurationText;
import io.jakri.logging.LogText;
import java.util.ArrayList;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The threads handler code runs on, none of them the agent's own: each handler (each handler object
 * a plugin provides) gets a small pool of daemon threads for the agent's calls into it ({@code
 * validate}, {@code start}, {@code close}) and a scheduler of its own, the one its {@link
 * io.jakri.handler.DiscoveryContext} carries. A call that does not return within {@link
 * HandlerLimits#callTimeout} is abandoned (its caller is told at once, the thread is interrupted
 * and left to run), and so is a scheduler task running that long (the scheduler gets another thread
 * for the handler's other tasks); each is logged and counted as a <em>stranded</em> thread until it
 * returns. A handler with {@link HandlerLimits#strandedThreads} stranded threads gets no new call
 * (refused at once) and no new scheduler thread, so a handler that never returns costs a bounded
 * number of threads: at most {@code strandedThreads} call threads and {@code strandedThreads + 1}
 * scheduler threads, idle ones ending after 30 s. The agent's own timer is used only to time calls
 * and to watch the schedulers, never to run handler code.
 *
 * <p>A handler's threads have its plugin's class loader as their context class loader, and so do
 * the threads its code starts on them (a thread takes its creator's): that is how the plugin
 * registry tells which threads must end before the plugin's class loader may be closed ({@link
 * PluginThreads}).
 */
final class HandlerThreads implements AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(HandlerThreads.class);

  private static final int QUEUED = 0;
  private static final int RUNNING = 1;
  private static final int DONE = 2;
  private static final int ABANDONED = 3;

  private final ScheduledExecutorService timer;
  private final HandlerLimits limits;
  private final Runnable freed;
  // Guarded by this. Keyed by identity: a handler's equals/hashCode are handler code.
  private final Map<DiscoveryHandler, Pool> pools = new IdentityHashMap<>();
  // Pools of handlers that went away while some of their threads were stranded. Guarded by this.
  private final List<Pool> retired = new ArrayList<>();
  private final ScheduledFuture<?> watchdog;
  private volatile boolean closed;

  /** Why a call into a handler did not complete. */
  static final class CallFailure extends Exception {
    private final boolean refused;

    CallFailure(String message, boolean refused) {
      super(message, null, false, false);
      this.refused = refused;
    }

    /** True when the call was not made because the handler has too many stranded threads. */
    boolean refused() {
      return refused;
    }
  }

  /**
   * @param timer the agent's timer, for timeouts and the watchdog only
   * @param freed told (on any thread) when a stranded thread of any handler returned
   */
  HandlerThreads(ScheduledExecutorService timer, HandlerLimits limits, Runnable freed) {
    this.timer = timer;
    this.limits = limits;
    this.freed = freed;
    long period = Math.max(50, Math.min(1000, limits.callTimeout().toMillis() / 4));
    this.watchdog =
        timer.scheduleWithFixedDelay(this::watch, period, period, TimeUnit.MILLISECONDS);
  }

  /** The scheduler handed to {@code handler} (named {@code name} in logs and metrics). */
  ScheduledExecutorService scheduler(DiscoveryHandler handler, String name) {
    return pool(handler, name).scheduler;
  }

  /**
   * Runs {@code body} on one of {@code handler}'s call threads. The future completes with its
   * result, or exceptionally with the exception it threw, or with a {@link CallFailure} when the
   * handler has too many stranded threads (refused at once) or the call did not return within the
   * call timeout (abandoned). A result returned after the call was abandoned goes to {@code late}
   * (on the returning thread), e.g. to close a discovery started too late.
   */
  <T> CompletableFuture<T> call(
      DiscoveryHandler handler,
      String name,
      String configuration,
      String what,
      Callable<T> body,
      Consumer<T> late) {
    Pool pool;
    try {
      pool = pool(handler, name);
    } catch (RejectedExecutionException e) {
      return CompletableFuture.failedFuture(new CallFailure("the agent is stopping", true));
    }
    int stranded = pool.stranded();
    if (stranded >= limits.strandedThreads()) {
      return CompletableFuture.failedFuture(
          new CallFailure(
              "handler "
                  + name
                  + " has "
                  + stranded
                  + " stranded threads (calls or tasks that never returned; the limit is "
                  + limits.strandedThreads()
                  + "): not called again until one returns",
              true));
    }
    CompletableFuture<T> result = new CompletableFuture<>();
    AtomicInteger state = new AtomicInteger(QUEUED);
    AtomicReference<Thread> runner = new AtomicReference<>();
    Runnable task =
        () -> {
          if (!state.compareAndSet(QUEUED, RUNNING)) {
            return; // timed out while waiting for a thread
          }
          runner.set(Thread.currentThread());
          T value = null;
          Throwable error = null;
          try {
            value = body.call();
          } catch (Exception | LinkageError | StackOverflowError e) {
            error = e;
          }
          if (state.compareAndSet(RUNNING, DONE)) {
            runner.set(null);
            Thread.interrupted(); // an interrupt meant for this call must not hit the next one
            if (error == null) {
              result.complete(value);
            } else {
              result.completeExceptionally(error);
            }
            return;
          }
          Thread.interrupted();
          int left = pool.abandoned.decrementAndGet();
          LOG.info(
              "handler {}: its {} for configuration {} returned after all (it had been abandoned);"
                  + " {} threads of this handler stranded now",
              LogText.escape(name),
              what,
              configuration,
              left + pool.stuckTimers);
          if (value != null && late != null) {
            try {
              late.accept(value);
            } catch (RuntimeException e) {
              LOG.warn("handler {}: late {} result: {}", LogText.escape(name), what, e.toString());
            }
          }
          freed.run();
        };
    try {
      pool.calls.execute(task);
      timer.schedule(
          () -> timedOut(pool, name, configuration, what, state, runner, result),
          limits.callTimeout().toMillis(),
          TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      state.set(DONE);
      return CompletableFuture.failedFuture(new CallFailure("the agent is stopping", true));
    }
    return result;
  }

  private void timedOut(
      Pool pool,
      String name,
      String configuration,
      String what,
      AtomicInteger state,
      AtomicReference<Thread> runner,
      CompletableFuture<?> result) {
    String timeout = DurationText.of(limits.callTimeout());
    if (state.compareAndSet(QUEUED, DONE)) {
      result.completeExceptionally(
          new CallFailure(
              "handler "
                  + name
                  + " had no free thread for its "
                  + what
                  + " within "
                  + timeout
                  + " (its other calls are slow or stranded)",
              false));
      return;
    }
    if (!state.compareAndSet(RUNNING, ABANDONED)) {
      return;
    }
    int stranded = pool.abandoned.incrementAndGet() + pool.stuckTimers;
    Thread thread = runner.get();
    LOG.warn(
        "handler {} blocks: its {} for configuration {} did not return within {}; thread {} is"
            + " abandoned ({})",
        LogText.escape(name),
        what,
        configuration,
        timeout,
        thread == null ? "?" : thread.getName(),
        strandedNow(stranded));
    if (thread != null) {
      thread.interrupt();
    }
    result.completeExceptionally(
        new CallFailure(
            "handler "
                + name
                + " did not "
                + what
                + " within "
                + timeout
                + " (its thread is abandoned; "
                + strandedNow(stranded)
                + ")",
            false));
  }

  /**
   * How many threads of a handler are stranded, against the limit. The limit stops new calls; calls
   * already running when it is reached can still be abandoned, so the count may pass it.
   */
  private String strandedNow(int stranded) {
    int limit = limits.strandedThreads();
    return stranded
        + (stranded == 1 ? " thread" : " threads")
        + " of this handler stranded; "
        + (stranded >= limit
            ? "no new calls while " + limit + " or more are"
            : "new calls stop at " + limit);
  }

  /** Stranded threads (abandoned calls and scheduler tasks still running) by handler name. */
  synchronized Map<String, Integer> stranded() {
    Map<String, Integer> byName = new TreeMap<>();
    for (Pool p : pools.values()) {
      byName.merge(p.name, p.stranded(), Integer::sum);
    }
    for (Pool p : retired) {
      byName.merge(p.name, p.stranded(), Integer::sum);
    }
    return byName;
  }

  /**
   * Stops the threads of handlers not in {@code installed} (after their discoveries were closed):
   * idle threads end, tasks already queued on their schedulers still run (a close may hand its
   * clean-up there), stranded threads are counted until they return.
   */
  synchronized void retainOnly(java.util.Set<DiscoveryHandler> installed) {
    java.util.Set<DiscoveryHandler> keep =
        java.util.Collections.newSetFromMap(new IdentityHashMap<>());
    keep.addAll(installed);
    for (var it = pools.entrySet().iterator(); it.hasNext(); ) {
      Map.Entry<DiscoveryHandler, Pool> e = it.next();
      if (!keep.contains(e.getKey())) {
        Pool pool = e.getValue(); // an IdentityHashMap entry is invalid once removed
        it.remove();
        pool.stop();
        if (pool.stranded() > 0) {
          retired.add(pool);
        }
      }
    }
  }

  private synchronized Pool pool(DiscoveryHandler handler, String name) {
    if (closed) {
      throw new RejectedExecutionException("closed");
    }
    return pools.computeIfAbsent(handler, h -> new Pool(name, h.getClass().getClassLoader()));
  }

  /** Counts scheduler tasks that have run too long and gives the scheduler a free thread. */
  private void watch() {
    List<Pool> all;
    synchronized (this) {
      retired.removeIf(p -> p.stranded() == 0);
      all = new ArrayList<>(pools.values());
      all.addAll(retired);
    }
    long tooLong = limits.callTimeout().toNanos();
    for (Pool p : all) {
      try {
        watch(p, tooLong);
      } catch (RuntimeException e) {
        LOG.warn("watching handler {}'s scheduler: {}", LogText.escape(p.name), e.toString());
      }
    }
  }

  private void watch(Pool p, long tooLong) {
    int stuck = p.scheduler.runningLongerThan(tooLong);
    int before = p.stuckTimers;
    p.stuckTimers = stuck;
    boolean room = p.stranded() < limits.strandedThreads();
    if (stuck > p.logged) {
      LOG.warn(
          "handler {} blocks its scheduler: {} of its tasks ran for over {} without returning;"
              + " {} ({})",
          LogText.escape(p.name),
          stuck,
          DurationText.of(limits.callTimeout()),
          room
              ? "they are abandoned and its other tasks run on a new thread"
              : "its other tasks wait until one returns",
          strandedNow(p.stranded()));
      p.logged = stuck;
    } else if (stuck == 0 && p.logged > 0) {
      LOG.info("handler {}: its scheduler's tasks returned; no longer blocked", p.name);
      p.logged = 0;
    }
    // One thread free for the handler's other tasks while its stranded budget lasts.
    int core = Math.max(1, stuck + (room ? 1 : 0));
    if (p.scheduler.getCorePoolSize() != core && !p.scheduler.isShutdown()) {
      p.scheduler.setCorePoolSize(core);
    }
    if (stuck < before) {
      freed.run();
    }
  }

  /**
   * Stops every handler's threads: what is queued and due (a close's clean-up handed to the
   * scheduler) still runs, for at most the call timeout in all (not waited for: handlers with
   * stranded threads); then the threads are interrupted and left.
   */
  @Override
  public void close() {
    List<Pool> all;
    synchronized (this) {
      closed = true;
      all = new ArrayList<>(pools.values());
      all.addAll(retired);
      pools.clear();
      retired.clear();
    }
    watchdog.cancel(false);
    all.forEach(Pool::stop);
    long deadline = System.nanoTime() + limits.callTimeout().toNanos();
    try {
      for (Pool p : all) {
        if (p.stranded() > 0) {
          continue; // its stranded threads would hold up the others' clean-up for nothing
        }
        p.calls.awaitTermination(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        p.scheduler.awaitTermination(
            Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    for (Pool p : all) {
      p.calls.shutdownNow();
      p.scheduler.stopNow();
    }
  }

  private final class Pool {
    final String name;
    final ThreadPoolExecutor calls;
    final HandlerScheduler scheduler;
    // Abandoned calls still running.
    final AtomicInteger abandoned = new AtomicInteger();
    // Scheduler threads running one task for longer than the call timeout (the watchdog's count).
    volatile int stuckTimers;
    // The stuck count last logged (watchdog thread only).
    int logged;

    Pool(String name, ClassLoader handlerLoader) {
      this.name = name;
      String prefix = "jakri-handler-" + name.replaceAll("[^A-Za-z0-9._-]", "_");
      int threads = limits.strandedThreads();
      this.calls =
          new ThreadPoolExecutor(
              threads,
              threads,
              30,
              TimeUnit.SECONDS,
              new LinkedBlockingQueue<>(),
              named(prefix, handlerLoader));
      calls.allowCoreThreadTimeOut(true);
      this.scheduler = new HandlerScheduler(named(prefix + "-timer", handlerLoader));
    }

    int stranded() {
      return abandoned.get() + stuckTimers;
    }

    void stop() {
      calls.shutdown();
      scheduler.stop();
    }
  }

  /**
   * A handler's own scheduler: one thread (more while tasks are stuck, see {@link #watch}), knows
   * how long each running task has run, and cannot be shut down by the handler.
   */
  static final class HandlerScheduler extends ScheduledThreadPoolExecutor {
    private final Map<Thread, Long> running = new ConcurrentHashMap<>();

    HandlerScheduler(ThreadFactory threads) {
      super(1, threads);
      setRemoveOnCancelPolicy(true);
      // A handler with nothing scheduled keeps no thread.
      setKeepAliveTime(30, TimeUnit.SECONDS);
      allowCoreThreadTimeOut(true);
      // On stop, periodic tasks and tasks due later end; one-shot tasks already due (a close's
      // clean-up) still run.
      setContinueExistingPeriodicTasksAfterShutdownPolicy(false);
      setExecuteExistingDelayedTasksAfterShutdownPolicy(false);
    }

    @Override
    protected void beforeExecute(Thread t, Runnable r) {
      running.put(t, System.nanoTime());
    }

    @Override
    protected void afterExecute(Runnable r, Throwable t) {
      running.remove(Thread.currentThread());
    }

    int runningLongerThan(long nanos) {
      long now = System.nanoTime();
      int n = 0;
      for (long started : running.values()) {
        if (now - started > nanos) {
          n++;
        }
      }
      return n;
    }

    /** Handlers must not shut down the scheduler they are given; the agent does. */
    @Override
    public void shutdown() {
      LOG.warn("a handler tried to shut down the scheduler the agent gave it; ignored");
    }

    @Override
    public List<Runnable> shutdownNow() {
      shutdown();
      return List.of();
    }

    void stop() {
      super.shutdown();
    }

    void stopNow() {
      super.shutdownNow();
    }
  }

  /** Daemon threads whose context class loader is the handler's. */
  private static ThreadFactory named(String prefix, ClassLoader handlerLoader) {
    AtomicInteger n = new AtomicInteger();
    return r -> {
      Thread t = new Thread(r, prefix + "-" + n.incrementAndGet());
      t.setDaemon(true);
      t.setContextClassLoader(handlerLoader);
      return t;
    };
  }
}
