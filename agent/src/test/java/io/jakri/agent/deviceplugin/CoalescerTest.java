package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CoalescerTest {

  private record Item(Coalescer.Slot slot, AtomicInteger runs) {
    Item() {
      this(new Coalescer.Slot(), new AtomicInteger());
    }
  }

  private static final Duration WINDOW = Duration.ofMillis(5);

  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
  private final AtomicLong now = new AtomicLong(1_000_000_000L);
  private final Coalescer<Item> coalescer =
      new Coalescer<>(scheduler, WINDOW, Item::slot, i -> i.runs().incrementAndGet(), now::get);

  @AfterEach
  void tearDown() {
    scheduler.shutdownNow();
  }

  /** Holds the scheduler's only thread until the returned latch is counted down. */
  private CountDownLatch occupyScheduler() throws InterruptedException {
    CountDownLatch busy = new CountDownLatch(1);
    CountDownLatch gate = new CountDownLatch(1);
    scheduler.execute(
        () -> {
          busy.countDown();
          try {
            gate.await();
          } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
          }
        });
    busy.await();
    return gate;
  }

  private long scheduledDelayNanos() {
    return ((ScheduledFuture<?>) scheduler.getQueue().peek()).getDelay(TimeUnit.NANOSECONDS);
  }

  @Test
  void aBurstOfRequestsRunsOncePerItemAndALaterRequestRunsAgain() throws Exception {
    CountDownLatch gate = occupyScheduler(); // the burst is over before any run
    Item a = new Item();
    Item b = new Item();
    for (int i = 0; i < 100; i++) {
      coalescer.request(a);
      coalescer.request(b);
    }
    assertThat(scheduler.getQueue()).hasSize(2); // one run per item
    assertThat(a.slot().pending()).isTrue();

    gate.countDown();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> scheduler.getQueue().isEmpty() && b.runs().get() == 1);
    assertThat(a.runs()).hasValue(1);
    assertThat(a.slot().pending()).isFalse();

    coalescer.request(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 2);
    assertThat(b.runs()).hasValue(1);
  }

  @Test
  void aFirstRequestRunsWithoutWaitingForTheWindow() throws Exception {
    CountDownLatch gate = occupyScheduler();
    Item a = new Item();
    coalescer.request(a);
    assertThat(scheduler.getQueue()).hasSize(1);
    assertThat(scheduledDelayNanos()).isLessThanOrEqualTo(0);
    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 1);
  }

  @Test
  void aRequestWithinTheWindowOfTheLastRunWaitsForItsEndAndOneAfterItDoesNot() throws Exception {
    Item a = new Item();
    coalescer.request(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 1 && !a.slot().pending());

    // 2 ms after the run: scheduled for the window's end, 3 ms from now.
    now.addAndGet(Duration.ofMillis(2).toNanos());
    CountDownLatch gate = occupyScheduler();
    coalescer.request(a);
    coalescer.request(a);
    assertThat(scheduler.getQueue()).hasSize(1);
    assertThat(scheduledDelayNanos())
        .isGreaterThan(Duration.ofMillis(2).toNanos())
        .isLessThanOrEqualTo(Duration.ofMillis(3).toNanos());
    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 2 && !a.slot().pending());

    // A full window after that run: at once again.
    now.addAndGet(WINDOW.toNanos());
    gate = occupyScheduler();
    coalescer.request(a);
    assertThat(scheduledDelayNanos()).isLessThanOrEqualTo(0);
    gate.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 3);
  }
}
