package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.SafeYaml;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * YAML attacks against both YAML entry points — Configuration files ({@link ConfigurationParser})
 * and discoveryDetails ({@link SafeYaml}, which every handler parses with) — are answered within a
 * bounded time and allocation, with a message rather than an exception.
 */
class YamlAttackTest {

  private static final Duration TIME_BOUND = Duration.ofSeconds(3);

  /** Bytes allocated by the parsing thread per attack (the 3 MiB document itself is ~6 MiB). */
  private static final long ALLOCATION_BOUND = 256L * 1024 * 1024;

  private static final com.sun.management.ThreadMXBean THREADS =
      (com.sun.management.ThreadMXBean) ManagementFactory.getThreadMXBean();

  @Test
  void everyAttackOnAConfigurationFileIsRejectedOrHarmlessWithinBounds() {
    ConfigurationParser parser = new ConfigurationParser();
    List<String> failures = new ArrayList<>();
    int rejected = 0;
    for (Map.Entry<String, String> attack : YamlAttacks.all().entrySet()) {
      String text =
          "apiVersion: akri.sh/v0\nkind: Configuration\nmetadata: {name: x}\n"
              + "spec:\n  discoveryHandler: {name: simulated}\n  brokerProperties:\n    "
              + attack.getValue().replace("\n", "\n    ");
      Measured<ConfigurationParser.Result> m =
          measure(() -> parser.parse(attack.getKey(), text), failures, attack.getKey());
      if (m != null) {
        if (!m.value().ok()) {
          rejected++;
          assertThat(m.value().errors()).allMatch(e -> e.startsWith(attack.getKey() + ": "));
        }
        // The attack standing alone as a file too.
        Measured<ConfigurationParser.Result> alone =
            measure(
                () -> parser.parse(attack.getKey(), attack.getValue()), failures, attack.getKey());
        if (alone != null && alone.value().ok()) {
          assertThat(alone.value().configurations()).isEmpty();
        }
      }
    }
    int cases = YamlAttacks.all().size();
    System.out.printf(
        "FAULT yaml-attacks-configuration cases=%d recovered=%d lost=%d (rejected=%d)%n",
        cases, cases - failures.size(), failures.size(), rejected);
    assertThat(failures).isEmpty();
    assertThat(rejected).isGreaterThanOrEqualTo(cases - YamlAttacks.HARMLESS_WITHIN_LIMITS.size());
  }

  @Test
  void everyAttackInDiscoveryDetailsIsRejectedWithAMessageWithinBounds() {
    List<String> failures = new ArrayList<>();
    int rejected = 0;
    for (Map.Entry<String, String> attack : YamlAttacks.all().entrySet()) {
      Measured<String> m =
          measure(
              () -> {
                try {
                  return "accepted " + SafeYaml.loadMap(attack.getValue()).size() + " keys";
                } catch (InvalidDetailsException e) {
                  return "rejected: " + e.getMessage();
                }
              },
              failures,
              attack.getKey());
      if (m != null && m.value().startsWith("rejected: ")) {
        rejected++;
        assertThat(m.value()).hasSizeLessThan(600);
      } else if (m != null && !YamlAttacks.HARMLESS_WITHIN_LIMITS.contains(attack.getKey())) {
        failures.add(attack.getKey() + " was " + m.value());
      }
    }
    int cases = YamlAttacks.all().size();
    System.out.printf(
        "FAULT yaml-attacks-details cases=%d recovered=%d lost=%d (rejected=%d)%n",
        cases, cases - failures.size(), failures.size(), rejected);
    assertThat(failures).isEmpty();
    assertThat(rejected).isGreaterThanOrEqualTo(cases - YamlAttacks.HARMLESS_WITHIN_LIMITS.size());
  }

  private record Measured<T>(T value, Duration took, long allocated) {}

  private static <T> Measured<T> measure(
      java.util.function.Supplier<T> action, List<String> failures, String name) {
    long thread = Thread.currentThread().getId();
    long before = THREADS.getThreadAllocatedBytes(thread);
    long start = System.nanoTime();
    T value;
    try {
      value = action.get();
    } catch (RuntimeException | Error e) {
      failures.add(name + " threw " + e);
      return null;
    }
    Duration took = Duration.ofNanos(System.nanoTime() - start);
    long allocated = THREADS.getThreadAllocatedBytes(thread) - before;
    System.out.printf(
        "attack %s: %d ms, %d KiB allocated%n", name, took.toMillis(), allocated >> 10);
    if (took.compareTo(TIME_BOUND) > 0) {
      failures.add(name + " took " + took);
    }
    if (allocated > ALLOCATION_BOUND) {
      failures.add(name + " allocated " + (allocated >> 20) + " MiB");
    }
    return new Measured<>(value, took, allocated);
  }
}
