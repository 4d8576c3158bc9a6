package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;

import java.net.URL;
import java.net.URLClassLoader;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

class PluginThreadsTest {

  private final ClassLoader plugin = new URLClassLoader(new URL[0], null);

  /** A thread running until {@code release} opens, started from one with the plugin's loader. */
  private Thread startedByPluginCode(CountDownLatch release) throws InterruptedException {
    Thread[] child = new Thread[1];
    Thread creator =
        new Thread(
            () -> {
              // As a handler's library does: a thread of its own, from a handler thread.
              child[0] =
                  new Thread(
                      () -> {
                        try {
                          release.await();
                        } catch (InterruptedException e) {
                          Thread.currentThread().interrupt();
                        }
                      },
                      "library-thread");
              child[0].setDaemon(true);
              child[0].start();
            },
            "handler-thread");
    creator.setContextClassLoader(plugin);
    creator.start();
    creator.join();
    return child[0];
  }

  @Test
  void aThreadStartedByAThreadOfThePluginIsOneOfItsThreadsUntilItEnds() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Thread library = startedByPluginCode(release);

    assertThat(PluginThreads.of(plugin)).containsExactly(library);
    assertThat(PluginThreads.of(getClass().getClassLoader())).doesNotContain(library);

    release.countDown();
    Map<ClassLoader, List<Thread>> left =
        PluginThreads.awaitEnd(List.of(plugin), System.nanoTime() + TimeUnit.SECONDS.toNanos(10));
    assertThat(left).isEmpty();
    assertThat(library.isAlive()).isFalse();
  }

  @Test
  void awaitingEndsAtTheDeadlineWithTheThreadsStillRunning() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    Thread library = startedByPluginCode(release);
    try {
      long start = System.nanoTime();
      Map<ClassLoader, List<Thread>> left =
          PluginThreads.awaitEnd(
              List.of(plugin), System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200));
      assertThat(left).containsOnlyKeys(plugin);
      assertThat(left.get(plugin)).containsExactly(library);
      assertThat(System.nanoTime() - start).isLessThan(TimeUnit.SECONDS.toNanos(5));
    } finally {
      release.countDown();
    }
  }
}
