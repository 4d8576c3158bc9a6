package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class CoalescerTest {

  private record Item(AtomicBoolean pending, AtomicInteger runs) {
    Item() {
      this(new AtomicBoolean(), new AtomicInteger());
    }
  }

  private final ScheduledThreadPoolExecutor scheduler = new ScheduledThreadPoolExecutor(1);
  private final DevicePluginManager.Coalescer<Item> coalescer =
      new DevicePluginManager.Coalescer<>(
          scheduler, Duration.ofMillis(5), Item::pending, i -> i.runs().incrementAndGet());

  @AfterEach
  void tearDown() {
    scheduler.shutdownNow();
  }

  @Test
  void aBurstOfRequestsRunsOncePerItemAndALaterRequestRunsAgain() throws Exception {
    // Keep the scheduler's only thread busy, so the burst is over before any run.
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
    Item a = new Item();
    Item b = new Item();
    for (int i = 0; i < 100; i++) {
      coalescer.request(a);
      coalescer.request(b);
    }
    assertThat(scheduler.getQueue()).hasSize(2); // one run per item
    assertThat(a.pending()).isTrue();

    gate.countDown();
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> scheduler.getQueue().isEmpty() && b.runs().get() == 1);
    assertThat(a.runs()).hasValue(1);
    assertThat(a.pending()).isFalse();

    coalescer.request(a);
    await().atMost(Duration.ofSeconds(10)).until(() -> a.runs().get() == 2);
    assertThat(b.runs()).hasValue(1);
  }
}
