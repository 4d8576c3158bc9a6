package io.jakri.controller.broker;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.Test;

class BrokerNamesTest {

  static final String LONGEST_INSTANCE = "c".repeat(56) + "-8120fe";

  @Test
  void podNamesAreAkris() {
    // Akri's create_broker_app_name: <node>-<instance>-pod when shared, <instance>-pod when not.
    assertThat(BrokerNames.podName("akri-debug-echo-foo-8120fe", "node-a", true))
        .isEqualTo("node-a-akri-debug-echo-foo-8120fe-pod");
    assertThat(BrokerNames.podName("akri-debug-echo-foo-a19705", "node-a", false))
        .isEqualTo("akri-debug-echo-foo-a19705-pod");
    // A node name with dots stays (a Pod name is a DNS subdomain); dots in an Instance name go.
    assertThat(BrokerNames.podName("cam-8120fe", "ip-10-0-0-1.ec2.internal", true))
        .isEqualTo("ip-10-0-0-1.ec2.internal-cam-8120fe-pod");
    assertThat(BrokerNames.podName("cam.v2-8120fe", "n1", false)).isEqualTo("cam-v2-8120fe-pod");
  }

  @Test
  void podNamesTooLongForAPodNameAreShortenedDeterministicallyAndStayDistinct() {
    String node = "n".repeat(240);
    String a = BrokerNames.podName(LONGEST_INSTANCE, node, true);
    assertThat(a)
        .isEqualTo(BrokerNames.podName(LONGEST_INSTANCE, node, true))
        .endsWith("-pod")
        .hasSizeLessThanOrEqualTo(63);
    assertThat(BrokerNames.isDnsLabel(a)).isTrue();
    assertThat(a).isNotEqualTo(BrokerNames.podName(LONGEST_INSTANCE, node + "x", true));
  }

  @Test
  void namesAreDeterministicValidLabelsOfAtMost63Characters() {
    for (String name :
        new String[] {
          BrokerNames.jobName(LONGEST_INSTANCE, 1234567890123L),
          BrokerNames.instanceServiceName(LONGEST_INSTANCE),
          BrokerNames.configurationServiceName("c".repeat(56)),
          BrokerNames.instanceServiceName("9lives-abcdef"),
        }) {
      assertThat(BrokerNames.isDnsLabel(name)).as(name).isTrue();
    }
    assertThat(BrokerNames.instanceServiceName("9lives-abcdef")).matches("[a-z].*-svc");
  }

  @Test
  void shortenedNamesStayDistinct() {
    Set<String> names = new HashSet<>();
    for (int i = 0; i < 1000; i++) {
      names.add(BrokerNames.podName(LONGEST_INSTANCE, "node-" + i, true));
      names.add(BrokerNames.podName("c".repeat(55) + "d-8120fe", "node-" + i, true));
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
