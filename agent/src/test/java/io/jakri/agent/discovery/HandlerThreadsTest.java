package io.jakri.agent.discovery;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.LogCapture;
import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class HandlerThreadsTest {

  private final ScheduledThreadPoolExecutor timer = new ScheduledThreadPoolExecutor(1);
  private final CountDownLatch release = new CountDownLatch(1);
  private final AtomicInteger freed = new AtomicInteger();
  private final HandlerThreads threads =
      new HandlerThreads(
          timer, new HandlerLimits(Duration.ofMillis(200), 2), freed::incrementAndGet);
  private final DiscoveryHandler handler = new Handler();

  @AfterEach
  void stop() {
    release.countDown();
    threads.close();
    timer.shutdownNow();
  }

  /** Blocks, deaf to interrupts, until the test releases it. */
  private String block() {
    while (true) {
      try {
        release.await();
        return "late";
      } catch (InterruptedException e) {
        // a stuck handler ignores interrupts
      }
    }
  }

  private static Throwable failure(CompletableFuture<?> f) throws InterruptedException {
    try {
      f.get(10, TimeUnit.SECONDS);
      throw new AssertionError("completed normally");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (java.util.concurrent.TimeoutException e) {
      throw new AssertionError("did not complete", e);
    }
  }

  @Test
  void callsRunOnTheHandlersOwnThreadAndReturnTheirResult() throws Exception {
    CompletableFuture<String> result =
        threads.call(handler, "h", "c", "start", () -> Thread.currentThread().getName(), v -> {});
    assertThat(result.get(10, TimeUnit.SECONDS)).startsWith("jakri-handler-h-");
    assertThat(threads.stranded()).isEqualTo(Map.of("h", 0));
  }

  @Test
  void aCallThatDoesNotReturnIsAbandonedCountedAndItsLateResultHandedOver() throws Exception {
    List<String> late = new CopyOnWriteArrayList<>();
    CompletableFuture<String> result =
        threads.call(handler, "h", "c", "start", this::block, late::add);
    Throwable failure = failure(result);
    assertThat(failure).isInstanceOf(HandlerThreads.CallFailure.class);
    assertThat(((HandlerThreads.CallFailure) failure).refused()).isFalse();
    assertThat(failure.getMessage()).contains("handler h did not start within 200ms");
    assertThat(threads.stranded()).isEqualTo(Map.of("h", 1));

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stranded().get("h") == 0);
    assertThat(late).containsExactly("late");
    assertThat(freed.get()).isEqualTo(1);
  }

  @Test
  void aHandlerAtItsStrandedLimitIsNotCalledAgain() throws Exception {
    failure(threads.call(handler, "h", "c1", "start", this::block, v -> {}));
    failure(threads.call(handler, "h", "c2", "start", this::block, v -> {}));
    AtomicBoolean ran = new AtomicBoolean();
    CompletableFuture<Boolean> third =
        threads.call(handler, "h", "c3", "start", () -> ran.getAndSet(true), v -> {});
    assertThat(third).isCompletedExceptionally();
    Throwable failure = failure(third);
    assertThat(((HandlerThreads.CallFailure) failure).refused()).isTrue();
    assertThat(failure.getMessage()).contains("handler h has 2 stranded threads");
    assertThat(ran).isFalse();
    assertThat(threads.stranded()).isEqualTo(Map.of("h", 2));

    // Another handler is not affected.
    DiscoveryHandler other = new Handler();
    assertThat(threads.call(other, "o", "c", "start", () -> 1, v -> {}).get(10, TimeUnit.SECONDS))
        .isEqualTo(1);
  }

  /**
   * The limit stops new calls, not calls already running: two calls started while one scheduler
   * task is stuck are both abandoned, three stranded with a limit of two. The messages say so
   * instead of "3 of at most 2".
   */
  @Test
  void callsAbandonedPastTheLimitAreCountedWithoutClaimingTheLimitIsAMaximum() throws Exception {
    ScheduledExecutorService scheduler = threads.scheduler(handler, "h");
    scheduler.execute(this::block);
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stranded().get("h") == 1);
    try (LogCapture logs = LogCapture.of(HandlerThreads.class)) {
      CompletableFuture<String> first =
          threads.call(handler, "h", "c1", "start", this::block, v -> {});
      CompletableFuture<String> second =
          threads.call(handler, "h", "c2", "start", this::block, v -> {});
      List<String> failures = List.of(failure(first).getMessage(), failure(second).getMessage());
      assertThat(threads.stranded()).isEqualTo(Map.of("h", 3));

      assertThat(failures)
          .anyMatch(
              m ->
                  m.endsWith(
                      "(its thread is abandoned; 3 threads of this handler stranded; no new calls"
                          + " while 2 or more are)"));
      assertThat(logs.messages())
          .filteredOn(m -> m.startsWith("handler h blocks: its start"))
          .hasSize(2)
          .anyMatch(
              m ->
                  m.endsWith(
                      "(3 threads of this handler stranded; no new calls while 2 or more are)"));
      assertThat(logs.messages()).noneMatch(m -> m.contains("of at most"));
      assertThat(failures).noneMatch(m -> m.contains("of at most"));
    }
  }

  @Test
  void aBlockedSchedulerGetsANewThreadUntilTheLimitAndCannotBeShutDownByTheHandler() {
    ScheduledExecutorService scheduler = threads.scheduler(handler, "h");
    scheduler.execute(this::block);
    AtomicBoolean second = new AtomicBoolean();
    scheduler.execute(() -> second.set(true));
    // The first task is abandoned; the second runs on a new thread.
    await().atMost(Duration.ofSeconds(10)).untilTrue(second);
    assertThat(threads.stranded()).isEqualTo(Map.of("h", 1));

    scheduler.execute(this::block);
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stranded().get("h") == 2);
    // At the limit: no new thread, the next task waits.
    AtomicBoolean waiting = new AtomicBoolean();
    scheduler.execute(() -> waiting.set(true));
    await().during(Duration.ofMillis(800)).atMost(Duration.ofSeconds(2)).untilFalse(waiting);

    scheduler.shutdown();
    assertThat(scheduler.isShutdown()).isFalse();

    release.countDown();
    await().atMost(Duration.ofSeconds(10)).untilTrue(waiting);
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stranded().get("h") == 0);
    assertThat(freed.get()).isPositive();
  }

  @Test
  void threadsOfARemovedHandlerStopAndItsStrandedOnesStayCountedUntilTheyReturn() throws Exception {
    failure(threads.call(handler, "h", "c", "start", this::block, v -> {}));
    threads.retainOnly(java.util.Set.of());
    assertThat(threads.stranded()).isEqualTo(Map.of("h", 1));
    release.countDown();
    await().atMost(Duration.ofSeconds(10)).until(() -> threads.stranded().isEmpty());
  }

  private static final class Handler implements DiscoveryHandler {
    @Override
    public String name() {
      return "h";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      return () -> {};
    }
  }
}
