package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.agent.MutableClock;
import java.time.Duration;
import org.junit.jupiter.api.Test;

class EventRateLimitTest {

  final MutableClock clock = new MutableClock();

  @Test
  void grantsUpToMaxPerTrailingWindowThenAgainAsTheOldestLeave() {
    EventRateLimit budget = new EventRateLimit(clock, 2, Duration.ofMinutes(10));
    assertThat(budget.tryAcquire()).isTrue();
    clock.advance(Duration.ofMinutes(4));
    assertThat(budget.tryAcquire()).isTrue();
    assertThat(budget.tryAcquire()).isFalse();
    clock.advance(Duration.ofMinutes(6)); // the first grant is a full window old
    assertThat(budget.tryAcquire()).isTrue();
    assertThat(budget.tryAcquire()).isFalse();
    clock.advance(Duration.ofMinutes(4));
    assertThat(budget.tryAcquire()).isTrue();
  }

  @Test
  void countsTheRefusalsOfAStreakSoOnlyItsFirstIsTold() {
    EventRateLimit budget = new EventRateLimit(clock, 1, Duration.ofMinutes(10));
    assertThat(budget.acquire()).isEqualTo(EventRateLimit.Grant.GRANTED);
    assertThat(budget.acquire()).isEqualTo(EventRateLimit.Grant.FIRST_REFUSAL);
    assertThat(budget.acquire()).isEqualTo(EventRateLimit.Grant.REFUSED);
    clock.advance(Duration.ofMinutes(10));
    assertThat(budget.acquire()).isEqualTo(EventRateLimit.Grant.GRANTED);
    assertThat(budget.acquire()).isEqualTo(EventRateLimit.Grant.FIRST_REFUSAL);
  }

  @Test
  void refusesNonsenseLimits() {
    assertThatThrownBy(() -> new EventRateLimit(clock, 0, Duration.ofMinutes(1)))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new EventRateLimit(clock, 1, Duration.ZERO))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
