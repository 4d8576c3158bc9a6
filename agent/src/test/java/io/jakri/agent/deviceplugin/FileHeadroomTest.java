package io.jakri.agent.deviceplugin;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.MutableClock;
import java.util.OptionalLong;
import org.junit.jupiter.api.Test;

class FileHeadroomTest {

  /** Open files the test sets, counting how often they were counted. */
  private static final class Files implements DevicePluginManager.OpenFiles {
    long open;
    long limit;
    int counts;

    Files(long open, long limit) {
      this.open = open;
      this.limit = limit;
    }

    @Override
    public OptionalLong open() {
      counts++;
      return OptionalLong.of(open);
    }

    @Override
    public OptionalLong limit() {
      return limit < 0 ? OptionalLong.empty() : OptionalLong.of(limit);
    }
  }

  @Test
  void theReserveIsATwoHundredthOfTheLimitWithinItsBounds() {
    assertThat(ServerStartPause.FileHeadroom.line(OptionalLong.of(20_000))).hasValue(19_900);
    assertThat(ServerStartPause.FileHeadroom.line(OptionalLong.of(1_048_576)))
        .hasValue(1_048_576 - ServerStartPause.FileHeadroom.MAX_RESERVE);
    assertThat(ServerStartPause.FileHeadroom.line(OptionalLong.of(256)))
        .hasValue(256 - ServerStartPause.FileHeadroom.MIN_RESERVE);
    assertThat(ServerStartPause.FileHeadroom.line(OptionalLong.empty())).isEmpty();
    assertThat(ServerStartPause.FileHeadroom.line(OptionalLong.of(Long.MAX_VALUE))).isEmpty();
  }

  @Test
  void startsStopAtTheLineAndGoOnOnceFilesAreFreed() {
    Files files = new Files(100, 1000); // line at 936 (the reserve's minimum)
    MutableClock clock = new MutableClock();
    ServerStartPause.FileHeadroom headroom = new ServerStartPause.FileHeadroom(files, clock);

    int granted = 0;
    while (headroom.tryStart(0)) {
      files.open +=
          ServerStartPause.FileHeadroom.FILES_PER_SERVER; // what each started server opens
      granted++;
      assertThat(granted).isLessThan(1000);
    }
    assertThat(headroom.over()).isTrue();
    assertThat(files.open).isLessThanOrEqualTo(936).isGreaterThan(936 - 2L * 2);
    assertThat(headroom.lastCount()).hasValue(files.open);

    // While over the line, counted again only every RECOUNT, however often asked.
    int counts = files.counts;
    for (int i = 0; i < 1000; i++) {
      assertThat(headroom.tryStart(0)).isFalse();
    }
    assertThat(files.counts).isEqualTo(counts);

    files.open = 500; // servers retired
    assertThat(headroom.tryStart(0)).isFalse(); // not counted again yet
    clock.advance(ServerStartPause.FileHeadroom.RECOUNT);
    assertThat(headroom.tryStart(0)).isTrue();
    assertThat(headroom.over()).isFalse();
  }

  @Test
  void startsStillUnderWayCountAsIfTheirFilesWereOpen() {
    Files files = new Files(936 - 2 * 10, 1000); // line at 936: room for 10 more servers
    assertThat(new ServerStartPause.FileHeadroom(files, new MutableClock()).tryStart(10)).isFalse();
    assertThat(new ServerStartPause.FileHeadroom(files, new MutableClock()).tryStart(9)).isTrue();
  }

  @Test
  void serversCostingMoreThanEstimatedStillStopAtTheLineWithFewCounts() {
    Files files = new Files(1_000, 20_000); // line at 19,900
    ServerStartPause.FileHeadroom headroom =
        new ServerStartPause.FileHeadroom(files, new MutableClock());
    while (headroom.tryStart(0)) {
      files.open += 3; // a kubelet in the same process holds the third file
    }
    assertThat(files.open).isBetween(19_900L - 3, 19_900L + 1);
    assertThat(files.counts).isLessThan(40);
  }

  @Test
  void farFromTheLineFilesAreCountedRarely() {
    Files files = new Files(100, 1_000_000);
    MutableClock clock = new MutableClock();
    ServerStartPause.FileHeadroom headroom = new ServerStartPause.FileHeadroom(files, clock);
    for (int i = 0; i < 10_000; i++) {
      assertThat(headroom.tryStart(0)).isTrue();
    }
    assertThat(files.counts).isEqualTo(1);
    clock.advance(ServerStartPause.FileHeadroom.STALE);
    files.open = 999_000; // opened by someone else meanwhile
    assertThat(headroom.tryStart(0)).isFalse();
    assertThat(files.counts).isEqualTo(2);
  }

  @Test
  void withoutAKnownLimitEveryStartIsAllowed() {
    Files files = new Files(100, -1);
    ServerStartPause.FileHeadroom headroom =
        new ServerStartPause.FileHeadroom(files, new MutableClock());
    assertThat(headroom.tryStart(0)).isTrue();
    assertThat(files.counts).isZero();
  }
}
