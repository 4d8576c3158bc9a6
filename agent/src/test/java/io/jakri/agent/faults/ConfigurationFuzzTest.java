package io.jakri.agent.faults;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.configuration.ConfigurationParser;
import io.jakri.agent.model.ConfigurationSpec;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Fuzzes the Configuration parser (standalone files and cluster-mode documents) with a seeded
 * generator: every case ends in a clear rejection naming its source, or in Configurations that obey
 * the documented rules; nothing throws and nothing takes long. Seed and case count can be changed
 * with {@code -Djakri.fuzz.seed} and {@code -Djakri.fuzz.cases}.
 */
class ConfigurationFuzzTest {

  static final long SEED = Long.getLong("jakri.fuzz.seed", 20261121L);
  static final int CASES = Integer.getInteger("jakri.fuzz.cases", 4000);
  // CPU time of the parsing thread, not wall time: a busy machine cannot make a case look slow, a
  // parse that explodes (aliases, nesting) still trips it.
  private static final Duration PER_CASE = Duration.ofSeconds(2);
  private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

  private final ConfigurationParser parser = new ConfigurationParser();

  @Test
  void everyGeneratedConfigurationTextIsRejectedClearlyOrValid() {
    YamlFuzz fuzz = new YamlFuzz(SEED);
    List<String> failures = new ArrayList<>();
    int accepted = 0;
    int rejected = 0;
    for (int i = 0; i < CASES; i++) {
      String text = fuzz.configurationText();
      String source = "case-" + i + ".yaml";
      long start = THREADS.getCurrentThreadCpuTime();
      try {
        ConfigurationParser.Result result = parser.parse(source, text);
        check(source, result, failures, text);
        if (result.ok()) {
          accepted++;
        } else {
          rejected++;
        }
      } catch (RuntimeException | Error e) {
        failures.add(source + " threw " + e + " on:\n" + text);
      }
      if (THREADS.getCurrentThreadCpuTime() - start > PER_CASE.toNanos()) {
        failures.add(source + " took more CPU than " + PER_CASE + " on:\n" + text);
      }
    }
    System.out.printf(
        "FAULT fuzz-configuration-yaml cases=%d recovered=%d lost=%d (accepted=%d rejected=%d)%n",
        CASES, CASES - failures.size(), failures.size(), accepted, rejected);
    assertThat(failures).isEmpty();
    assertThat(accepted).as("the generator also produces valid Configurations").isPositive();
    assertThat(rejected).as("and invalid ones").isPositive();
  }

  @Test
  void everyGeneratedClusterDocumentIsRejectedClearlyOrValid() {
    YamlFuzz fuzz = new YamlFuzz(SEED + 1);
    List<String> failures = new ArrayList<>();
    for (int i = 0; i < CASES; i++) {
      Object document = fuzz.documentTree(0);
      String source = "document-" + i;
      try {
        check(source, parser.check(source, document), failures, String.valueOf(document));
      } catch (RuntimeException | Error e) {
        failures.add(source + " threw " + e + " on " + document);
      }
    }
    System.out.printf(
        "FAULT fuzz-configuration-document cases=%d recovered=%d lost=%d%n",
        CASES, CASES - failures.size(), failures.size());
    assertThat(failures).isEmpty();
  }

  private static void check(
      String source, ConfigurationParser.Result result, List<String> failures, String input) {
    for (String error : result.errors()) {
      if (!error.startsWith(source) || error.length() <= source.length() + 2) {
        failures.add(source + ": unclear error \"" + error + "\" for:\n" + input);
      }
    }
    for (String warning : result.warnings()) {
      if (!warning.startsWith(source)) {
        failures.add(source + ": warning without its source \"" + warning + "\"");
      }
    }
    for (ConfigurationSpec spec : result.configurations()) {
      if (ConfigurationParser.nameProblem(spec.name()).isPresent()
          || spec.handlerName().isBlank()
          || spec.capacity() < 1
          || spec.capacity() > 1_000_000
          || spec.discoveryDetails() == null) {
        failures.add(source + ": accepted an invalid Configuration " + spec + " from:\n" + input);
      }
    }
  }
}
