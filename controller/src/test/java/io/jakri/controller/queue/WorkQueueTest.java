package io.jakri.controller.queue;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Clock;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.random.RandomGenerator;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class WorkQueueTest {

  final ExecutorService workers = Executors.newFixedThreadPool(4);
  final ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
  final Backoff backoff = new Backoff(Duration.ofMillis(50), Duration.ofMillis(400));

  @AfterEach
  void tearDown() {
    workers.shutdownNow();
    scheduler.shutdownNow();
  }

  WorkQueue<String> queue(WorkQueue.Handler<String> handler) {
    return new WorkQueue<>(
        handler, backoff, scheduler, Clock.systemUTC(), RandomGenerator.getDefault());
  }

  @Test
  void aBurstForOneKeyCoalescesWhileItWaits() throws Exception {
    CountDownLatch release = new CountDownLatch(1);
    List<String> seen = new CopyOnWriteArrayList<>();
    WorkQueue<String> q =
        queue(
            k -> {
              if (k.equals("blocker")) {
                release.await(10, TimeUnit.SECONDS);
              }
              seen.add(k);
              return Optional.empty();
            });
    q.add("blocker");
    q.start(1, workers);
    await().atMost(Duration.ofSeconds(5)).until(() -> q.depth() == 1);
    for (int i = 0; i < 100; i++) {
      q.add("a");
    }
    release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> q.depth() == 0 && seen.size() == 2);
    assertThat(seen).containsExactly("blocker", "a");
    q.close();
  }

  @Test
  void aKeyIsNeverProcessedTwiceAtOnceAndAnAddDuringProcessingRunsItAgain() throws Exception {
    AtomicInteger concurrent = new AtomicInteger();
    AtomicInteger maxConcurrent = new AtomicInteger();
    AtomicInteger runs = new AtomicInteger();
    CountDownLatch inside = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    WorkQueue<String> q =
        queue(
            k -> {
              maxConcurrent.accumulateAndGet(concurrent.incrementAndGet(), Math::max);
              if (runs.incrementAndGet() == 1) {
                inside.countDown();
                release.await(10, TimeUnit.SECONDS);
              }
              concurrent.decrementAndGet();
              return Optional.empty();
            });
    q.start(4, workers);
    q.add("k");
    inside.await(5, TimeUnit.SECONDS);
    q.add("k");
    q.add("k");
    release.countDown();
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2 && q.depth() == 0);
    assertThat(maxConcurrent.get()).isEqualTo(1);
    q.close();
  }

  @Test
  void aFailingKeyIsRetriedWithGrowingDelaysWhileOthersProceed() {
    List<Long> attempts = new CopyOnWriteArrayList<>();
    ConcurrentHashMap<String, Integer> ok = new ConcurrentHashMap<>();
    WorkQueue<String> q =
        queue(
            k -> {
              if (k.equals("bad")) {
                attempts.add(System.nanoTime());
                if (attempts.size() < 4) {
                  throw new IllegalStateException("refused");
                }
              } else {
                ok.merge(k, 1, Integer::sum);
              }
              return Optional.empty();
            });
    q.start(2, workers);
    q.add("bad");
    for (int i = 0; i < 50; i++) {
      q.add("good-" + i);
    }
    await().atMost(Duration.ofSeconds(5)).until(() -> ok.size() == 50);
    await().atMost(Duration.ofSeconds(5)).until(() -> attempts.size() == 4);
    long firstGap = attempts.get(1) - attempts.get(0);
    long thirdGap = attempts.get(3) - attempts.get(2);
    assertThat(Duration.ofNanos(firstGap)).isGreaterThanOrEqualTo(Duration.ofMillis(35));
    assertThat(thirdGap).isGreaterThan(firstGap);
    q.close();
  }

  @Test
  void aReturnedDelayRunsTheKeyAgainOnce() {
    AtomicInteger runs = new AtomicInteger();
    WorkQueue<String> q =
        queue(
            k ->
                runs.incrementAndGet() == 1
                    ? Optional.of(Duration.ofMillis(100))
                    : Optional.empty());
    q.start(1, workers);
    q.add("k");
    await().atMost(Duration.ofSeconds(5)).until(() -> runs.get() == 2);
    await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(2))
        .until(() -> runs.get() == 2);
    q.close();
  }

  @Test
  void backoffDoublesUpToItsMaximumWithBoundedJitter() {
    RandomGenerator r = RandomGenerator.getDefault();
    for (int i = 0; i < 100; i++) {
      assertThat(backoff.delay(1, r).toMillis()).isBetween(40L, 60L);
      assertThat(backoff.delay(2, r).toMillis()).isBetween(80L, 120L);
      assertThat(backoff.delay(50, r).toMillis()).isBetween(320L, 480L);
    }
  }
}
