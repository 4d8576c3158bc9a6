package io.jakri.agent.discovery;

import java.util.ArrayList;
import java.util.Collection;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;

/**
 * The live threads of a plugin: those whose context class loader is the plugin's class loader, or
 * whose class the plugin defined. The agent runs all of a plugin's code on threads whose context
 * class loader is the plugin's ({@link HandlerThreads}, the registry's load threads), and a new
 * thread takes its creator's, so the timers, executors and library threads a handler starts carry
 * it too. A thread that handler code gives another context class loader is not seen. Stateless; any
 * thread.
 */
final class PluginThreads {

  private PluginThreads() {}

  /** The live threads of the plugin loaded by {@code loader}, the calling thread excepted. */
  static List<Thread> of(ClassLoader loader) {
    List<Thread> found = new ArrayList<>();
    for (Thread t : all()) {
      if (t != Thread.currentThread() && t.isAlive() && belongs(t, loader)) {
        found.add(t);
      }
    }
    return found;
  }

  /**
   * Waits until no thread of any of {@code loaders} is alive, or until {@code deadlineNanos} (of
   * {@link System#nanoTime}). Returns the threads still alive then, by loader (only loaders with
   * some). Threads started meanwhile are waited for too.
   */
  static Map<ClassLoader, List<Thread>> awaitEnd(
      Collection<ClassLoader> loaders, long deadlineNanos) throws InterruptedException {
    while (true) {
      Map<ClassLoader, List<Thread>> alive = new IdentityHashMap<>();
      for (ClassLoader loader : loaders) {
        List<Thread> threads = of(loader);
        if (!threads.isEmpty()) {
          alive.put(loader, threads);
        }
      }
      long left = deadlineNanos - System.nanoTime();
      if (alive.isEmpty() || left <= 0) {
        return alive;
      }
      // Join one thread briefly, then look again: others may end first or new ones may start.
      Thread next = alive.values().iterator().next().get(0);
      next.join(Math.max(1, Math.min(50, left / 1_000_000)));
    }
  }

  private static boolean belongs(Thread t, ClassLoader loader) {
    return t.getContextClassLoader() == loader || t.getClass().getClassLoader() == loader;
  }

  private static List<Thread> all() {
    ThreadGroup root = Thread.currentThread().getThreadGroup();
    while (root.getParent() != null) {
      root = root.getParent();
    }
    Thread[] threads = new Thread[root.activeCount() + 64];
    int n;
    while ((n = root.enumerate(threads, true)) == threads.length) {
      threads = new Thread[threads.length * 2];
    }
    return java.util.Arrays.asList(threads).subList(0, n);
  }
}
