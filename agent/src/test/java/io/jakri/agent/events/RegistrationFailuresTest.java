package io.jakri.agent.events;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RegistrationFailuresTest {

  final RegistrationFailures failures = new RegistrationFailures(3);

  private List<Boolean> fail(String resource, int times) {
    List<Boolean> verdicts = new ArrayList<>();
    for (int i = 0; i < times; i++) {
      verdicts.add(failures.failed(resource));
    }
    return verdicts;
  }

  @Test
  void aStreakIsReportedOnceWhenItReachesTheThreshold() {
    assertThat(fail("akri.sh/a", 10))
        .containsExactly(false, false, true, false, false, false, false, false, false, false);
  }

  @Test
  void aSuccessEndsTheStreakAndTheNextStreakIsReportedAgain() {
    fail("akri.sh/a", 2);
    failures.succeeded("akri.sh/a");
    assertThat(fail("akri.sh/a", 2)).containsOnly(false);
    failures.succeeded("akri.sh/a");
    assertThat(fail("akri.sh/a", 3)).containsExactly(false, false, true);
  }

  @Test
  void resourcesHaveTheirOwnStreaksAndRetiringOneForgetsIt() {
    fail("akri.sh/a", 2);
    assertThat(fail("akri.sh/b", 2)).containsOnly(false);
    failures.forget("akri.sh/a");
    assertThat(failures.failed("akri.sh/a")).isFalse();
    assertThat(failures.failed("akri.sh/b")).isTrue();
  }

  @Test
  void aVeryLongStreakNeitherReportsAgainNorOverflows() {
    fail("akri.sh/a", 3);
    assertThat(fail("akri.sh/a", 100_000)).containsOnly(false);
  }
}
