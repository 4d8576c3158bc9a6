package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class ConflictStormsTest {

  final MutableClock clock = new MutableClock();
  final ConflictStorms storms = new ConflictStorms(clock, 3, Duration.ofSeconds(60), 100);

  @Test
  void theConflictThatReachesTheThresholdWithinTheWindowReportsTheStormOnce() {
    assertThat(storms.record("i1", 1)).isFalse();
    clock.advance(Duration.ofSeconds(10));
    assertThat(storms.record("i1", 1)).isFalse();
    clock.advance(Duration.ofSeconds(10));
    assertThat(storms.record("i1", 1)).isTrue();
    clock.advance(Duration.ofSeconds(1));
    assertThat(storms.record("i1", 1)).isFalse();
  }

  @Test
  void conflictsSpreadWiderThanTheWindowAreNoStorm() {
    for (int i = 0; i < 10; i++) {
      assertThat(storms.record("i1", 1)).as("conflict %d", i).isFalse();
      clock.advance(Duration.ofSeconds(31));
    }
  }

  @Test
  void aConflictExactlyOneWindowOldNoLongerCounts() {
    storms.record("i1", 2);
    clock.advance(Duration.ofSeconds(60));
    assertThat(storms.record("i1", 1)).isFalse();
    assertThat(storms.record("i1", 1)).isFalse();
    assertThat(storms.record("i1", 1)).isTrue();
  }

  @Test
  void aLastingStormIsReportedAtMostOncePerWindow() {
    int reports = 0;
    // 10 conflicts a second for 5 minutes.
    for (int s = 0; s < 300; s++) {
      if (storms.record("i1", 10)) {
        reports++;
      }
      clock.advance(Duration.ofSeconds(1));
    }
    assertThat(reports).isEqualTo(5);
  }

  @Test
  void severalConflictsAtOnceCountEachAndInstancesCountSeparately() {
    assertThat(storms.record("i1", 2)).isFalse();
    assertThat(storms.record("i2", 2)).isFalse();
    assertThat(storms.record("i2", 1)).isTrue();
    assertThat(storms.record("i1", 1)).isTrue();
    assertThat(storms.record("i3", 0)).isFalse();
  }

  @Test
  void theLeastRecentlyConflictingInstanceIsForgottenBeyondTheBound() {
    ConflictStorms small = new ConflictStorms(clock, 2, Duration.ofSeconds(60), 2);
    small.record("a", 1);
    small.record("b", 1);
    small.record("c", 1); // "a" is forgotten
    assertThat(small.record("a", 1)).isFalse();
    assertThat(small.record("c", 1)).isTrue();
  }

  @Test
  void aForgottenInstanceStartsCountingAfresh() {
    storms.record("i1", 2);
    storms.forget("i1");
    assertThat(storms.record("i1", 1)).isFalse();
  }
}
