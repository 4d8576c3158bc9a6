package io.jakri.agent.metrics;

import static org.assertj.core.api.Assertions.assertThat;

import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

class AdvertiseLatencyTest {

  final AtomicLong now = new AtomicLong(1_000_000_000L);
  final Timer timer = Timer.builder("t").register(new SimpleMeterRegistry());
  final AdvertiseLatency latency = new AdvertiseLatency(timer, now::get, 3);

  private void advanceMillis(long ms) {
    now.addAndGet(TimeUnit.MILLISECONDS.toNanos(ms));
  }

  @Test
  void aSentSnapshotRecordsTheTimeSinceTheOldestWaitingReport() {
    long first = now.get();
    advanceMillis(10);
    latency.changed("akri.sh/a", first);
    latency.changed("akri.sh/a", now.get()); // a later change waits with the older one
    advanceMillis(40);
    latency.advertised("akri.sh/a", true);
    assertThat(timer.count()).isEqualTo(1);
    assertThat(timer.totalTime(TimeUnit.MILLISECONDS)).isEqualTo(50.0);
    latency.advertised("akri.sh/a", true); // nothing waits any more
    assertThat(timer.count()).isEqualTo(1);
  }

  @Test
  void streamsThatAlreadyHadTheDevicesOrARetiredResourceDropTheChangeWithoutASample() {
    latency.changed("akri.sh/a", now.get());
    latency.changed("akri.sh/b", now.get());
    advanceMillis(100);
    latency.advertised("akri.sh/a", false);
    latency.retired("akri.sh/b");
    latency.advertised("akri.sh/a", true);
    latency.advertised("akri.sh/b", true);
    assertThat(timer.count()).isZero();
    assertThat(latency.waiting()).isZero();
  }

  @Test
  void atMostMaxPendingResourcesWait() {
    for (int i = 0; i < 10; i++) {
      latency.changed("akri.sh/r" + i, now.get());
    }
    assertThat(latency.waiting()).isEqualTo(3);
    latency.changed("akri.sh/r0", now.get()); // already waiting: still taken
    advanceMillis(5);
    for (int i = 0; i < 10; i++) {
      latency.advertised("akri.sh/r" + i, true);
    }
    assertThat(timer.count()).isEqualTo(3);
  }
}
