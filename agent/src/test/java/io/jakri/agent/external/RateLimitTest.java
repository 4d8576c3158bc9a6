package io.jakri.agent.external;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class RateLimitTest {

  final AtomicLong now = new AtomicLong(1_000);

  @Test
  void aBurstOfTwiceTheRateIsTakenThenTheRestIsRefusedAndCounted() {
    RateLimit rate = new RateLimit(2, now::get);
    for (int i = 0; i < 4; i++) {
      assertThat(rate.tryAcquire()).as("token %d", i).isTrue();
    }
    assertThat(rate.tryAcquire()).isFalse();
    assertThat(rate.tryAcquire()).isFalse();
    assertThat(rate.refusedNow()).isEqualTo(2);
  }

  @Test
  void tokensComeBackAtTheRateUpToTheBurst() {
    RateLimit rate = new RateLimit(2, now::get);
    while (rate.tryAcquire()) {
      // empty the bucket
    }
    now.addAndGet(499_000_000L); // just short of one token
    assertThat(rate.tryAcquire()).isFalse();
    now.addAndGet(1_000_000L);
    assertThat(rate.tryAcquire()).isTrue();
    assertThat(rate.tryAcquire()).isFalse();

    now.addAndGet(3_600_000_000_000L); // an hour: still only the burst
    int taken = 0;
    while (rate.tryAcquire()) {
      taken++;
    }
    assertThat(taken).isEqualTo(4);
  }
}
