package io.jakri.controller.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BrokerNamesTest {

  static final String LONGEST_INSTANCE = "c".repeat(56) + "-8120fe";

  @Test
  void podNamesAreInstanceNodeHashAndPod() {
    assertThat(BrokerNames.podName("akri-debug-echo-foo-8120fe", "node-a"))
        .isEqualTo("akri-debug-echo-foo-8120fe-" + BrokerNames.nodeHash("node-a") + "-pod");
    assertThat(BrokerNames.nodeHash("node-a")).hasSize(6).matches("[0-9a-f]{6}");
  }

  @Test
  void namesAreDeterministicValidLabelsOfAtMost63Characters() {
    String node = "ip-10-0-0-1.eu-west-1.compute.internal." + "x".repeat(200);
    for (String name :
        new String[] {
          BrokerNames.podName(LONGEST_INSTANCE, node),
          BrokerNames.jobName(LONGEST_INSTANCE, 1234567890123L),
          BrokerNames.instanceServiceName(LONGEST_INSTANCE),
          BrokerNames.configurationServiceName("c".repeat(56)),
          BrokerNames.instanceServiceName("9lives-abcdef"),
        }) {
      assertThat(BrokerNames.isDnsLabel(name)).as(name).isTrue();
    }
    assertThat(BrokerNames.podName(LONGEST_INSTANCE, node))
        .isEqualTo(BrokerNames.podName(LONGEST_INSTANCE, node))
        .endsWith("-pod");
    assertThat(BrokerNames.instanceServiceName("9lives-abcdef")).matches("[a-z].*-svc");
  }

  @Test
  void shortenedNamesStayDistinct() {
    Set<String> names = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      names.add(BrokerNames.podName(LONGEST_INSTANCE, "node-" + i));
      names.add(BrokerNames.podName("c".repeat(55) + "d-8120fe", "node-" + i));
    }
    assertThat(names).hasSize(2000);
    assertThat(BrokerNames.instanceServiceName(LONGEST_INSTANCE))
        .isNotEqualTo(BrokerNames.instanceServiceName("c".repeat(56) + "-8120ff"));
  }

  @Test
  void labelValuesKeepValidValuesAndShortenOthers() {
    assertThat(BrokerNames.labelValue("node-a")).isEqualTo("node-a");
    assertThat(BrokerNames.labelValue("ip-10-0-0-1.compute.internal"))
        .isEqualTo("ip-10-0-0-1.compute.internal");
    String longNode = "n".repeat(100);
    assertThat(BrokerNames.labelValue(longNode))
        .hasSizeLessThanOrEqualTo(63)
        .isNotEqualTo(BrokerNames.labelValue("n".repeat(101)));
  }
}
