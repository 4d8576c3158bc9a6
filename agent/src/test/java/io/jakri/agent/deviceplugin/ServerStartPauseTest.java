package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import ch.qos.logback.classic.Level;
import io.jakri.agent.LogCapture;
import io.jakri.agent.MutableClock;
import java.time.Duration;
import java.util.List;
import java.util.OptionalLong;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class ServerStartPauseTest {

  /** Open files the test sets; the line is at 936 for a limit of 1000 (the minimum reserve). */
  private static final class Files implements DevicePluginManager.OpenFiles {
    volatile long open;

    Files(long open) {
      this.open = open;
    }

    @Override
    public OptionalLong open() {
      return OptionalLong.of(open);
    }

    @Override
    public OptionalLong limit() {
      return OptionalLong.of(1000);
    }
  }

  private final Files files = new Files(990);
  private final MutableClock clock = new MutableClock();
  private final List<DevicePluginReport> events = new CopyOnWriteArrayList<>();

  /** The control executor: the test thread runs what lands here, as the control thread would. */
  private final BlockingQueue<Runnable> control = new LinkedBlockingQueue<>();

  private final AtomicInteger pumps = new AtomicInteger();
  private ScheduledExecutorService scheduler;
  private ServerStartPause hold;
  private LogCapture logs;

  @BeforeEach
  void setUp() {
    scheduler = new ScheduledThreadPoolExecutor(1);
    hold =
        new ServerStartPause(
            new ServerStartPause.FileHeadroom(files, clock),
            scheduler,
            control::add,
            pumps::incrementAndGet,
            events::add);
    logs = LogCapture.of(DevicePluginManager.class.getName(), Level.INFO);
  }

  @AfterEach
  void tearDown() {
    logs.close();
    scheduler.shutdownNow();
  }

  private List<String> logged(Level level) {
    return logs.events().stream()
        .filter(e -> e.getLevel() == level)
        .map(e -> e.getFormattedMessage())
        .toList();
  }

  @Test
  void aRefusedStartHoldsWarnsOnceAndPumpsAgainAfterTheRecount() {
    assertThat(hold.mayStart(0, 5)).isFalse();
    assertThat(hold.held()).isTrue();
    assertThat(events).containsExactly(new DevicePluginReport.OpenFilesLow(5, 990, 1000));
    assertThat(logged(Level.WARN))
        .singleElement()
        .asString()
        .startsWith("open files: 990 of the limit of 1000 are in use;")
        .contains("(5 waiting now");

    // A recheck is already scheduled: refused again, but neither reported nor scheduled again.
    assertThat(hold.mayStart(0, 6)).isFalse();
    assertThat(events).hasSize(1);

    await().atMost(Duration.ofSeconds(10)).until(() -> !control.isEmpty());
    control.remove().run();
    assertThat(pumps).hasValue(1);
    assertThat(control).isEmpty();

    // Still over the line after the recheck: the waiting count is reported again, the WARN not.
    assertThat(hold.mayStart(0, 7)).isFalse();
    assertThat(events).last().isEqualTo(new DevicePluginReport.OpenFilesLow(7, 990, 1000));
    assertThat(logged(Level.WARN)).hasSize(1);

    files.open = 100; // servers retired
    clock.advance(ServerStartPause.FileHeadroom.RECOUNT);
    assertThat(hold.mayStart(0, 7)).isTrue();
    assertThat(hold.held()).isTrue(); // until nothing waits
    hold.drained();
    assertThat(hold.held()).isFalse();
    assertThat(events).last().isEqualTo(new DevicePluginReport.OpenFilesLow(0, 100, 1000));
    assertThat(logged(Level.INFO))
        .containsExactly(
            "open files: 100 of the limit of 1000 in use; no device-plugin resource waits for"
                + " files any more");

    hold.drained(); // the episode ended once
    assertThat(events).hasSize(3);
  }

  @Test
  void drainedWithoutAHoldSaysNothing() {
    files.open = 100;
    assertThat(hold.mayStart(0, 1)).isTrue();
    hold.drained();
    assertThat(hold.held()).isFalse();
    assertThat(events).isEmpty();
    assertThat(logs.events()).isEmpty();
  }

  @Test
  void startsUnderWayCountAgainstTheLine() {
    files.open = 936 - 2 * 10; // room for 10 more servers
    assertThat(hold.mayStart(10, 1)).isFalse();
    assertThat(events).containsExactly(new DevicePluginReport.OpenFilesLow(1, 936, 1000));
  }

  @Test
  void aClosedSchedulerLeavesTheHoldWithoutARecheck() {
    scheduler.shutdownNow();
    assertThat(hold.mayStart(0, 2)).isFalse();
    assertThat(hold.mayStart(0, 3)).isFalse(); // no recheck pending: reported again
    assertThat(events)
        .containsExactly(
            new DevicePluginReport.OpenFilesLow(2, 990, 1000),
            new DevicePluginReport.OpenFilesLow(3, 990, 1000));
    assertThat(control).isEmpty();
    assertThat(pumps).hasValue(0);
  }
}
