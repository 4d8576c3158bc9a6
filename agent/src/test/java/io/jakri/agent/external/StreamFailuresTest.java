package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class StreamFailuresTest {

  static final long MS = 1_000_000L;

  static long delay(StreamFailures.Next next) {
    assertThat(next).isInstanceOf(StreamFailures.Retry.class);
    return ((StreamFailures.Retry) next).delayMs();
  }

  @Test
  void dialsAgainAfter250MsDoublingTo5s() {
    StreamFailures failures = new StreamFailures(Duration.ofMinutes(1));
    assertThat(failures.failing()).isFalse();
    List<Long> delays = new ArrayList<>();
    for (int i = 0; i < 8; i++) {
      delays.add(delay(failures.failed(0, "UNAVAILABLE")));
    }
    assertThat(delays).containsExactly(250L, 500L, 1000L, 2000L, 4000L, 5000L, 5000L, 5000L);
    assertThat(failures.failing()).isTrue();
  }

  @Test
  void theLastDialComesNoLaterThanTheDrop() {
    StreamFailures failures = new StreamFailures(Duration.ofSeconds(1));
    assertThat(delay(failures.failed(0, "x"))).isEqualTo(250);
    assertThat(delay(failures.failed(900 * MS, "x"))).isEqualTo(100);
    assertThat(delay(failures.failed(999_999_999L, "x"))).isEqualTo(1);
  }

  @Test
  void failingForDropAfterDropsNamingTheFirstAndLastFailure() {
    StreamFailures failures = new StreamFailures(Duration.ofSeconds(1));
    failures.failed(5 * MS, "UNAVAILABLE: refused");
    StreamFailures.Next next = failures.failed(1_005 * MS, "UNAVAILABLE: reset");
    assertThat(next)
        .isEqualTo(
            new StreamFailures.Drop(
                "Discover kept failing for 1000 ms (first: UNAVAILABLE: refused; last:"
                    + " UNAVAILABLE: reset)"));

    StreamFailures same = new StreamFailures(Duration.ofSeconds(1));
    same.failed(0, "UNAVAILABLE");
    assertThat(same.failed(2_000 * MS, "UNAVAILABLE"))
        .isEqualTo(
            new StreamFailures.Drop("Discover kept failing for 2000 ms (last: UNAVAILABLE)"));
  }

  @Test
  void anAnswerEndsTheFailingAndABackoffResetStartsTheDelaysOver() {
    StreamFailures failures = new StreamFailures(Duration.ofSeconds(1));
    failures.failed(0, "x");
    failures.failed(0, "x");
    failures.answered();
    assertThat(failures.failing()).isFalse();
    // failing anew: counted from now, from the first delay
    assertThat(delay(failures.failed(10_000 * MS, "y"))).isEqualTo(250);
    assertThat(delay(failures.failed(10_000 * MS, "y"))).isEqualTo(500);
    failures.resetBackoff();
    assertThat(failures.failing()).isTrue();
    assertThat(delay(failures.failed(10_000 * MS, "y"))).isEqualTo(250);
  }
}
