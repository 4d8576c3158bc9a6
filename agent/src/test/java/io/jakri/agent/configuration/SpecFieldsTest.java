package io.jakri.agent.configuration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.math.BigInteger;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class SpecFieldsTest {

  @Test
  void capacityIsOneByDefaultAndBoundedWithAMessageForEachWayOut() throws Invalid {
    assertThat(SpecFields.capacity(null)).isEqualTo(1);
    assertThat(SpecFields.capacity(ConfigurationParser.MAX_CAPACITY))
        .isEqualTo(ConfigurationParser.MAX_CAPACITY);
    assertThatThrownBy(() -> SpecFields.capacity(0))
        .hasMessage("spec.capacity must be at least 1 but is 0");
    assertThatThrownBy(() -> SpecFields.capacity(ConfigurationParser.MAX_CAPACITY + 1))
        .hasMessage("spec.capacity must be at most 1000000 but is 1000001");
    assertThatThrownBy(() -> SpecFields.capacity(-3_000_000_000L))
        .hasMessage(
            "spec.capacity -3000000000 is too large: it must be at most 1000000 and at least 1");
    assertThatThrownBy(() -> SpecFields.capacity(new BigInteger("99999999999999999999")))
        .hasMessage("spec.capacity 99999999999999999999 is too large: it must be at most 1000000");
    assertThatThrownBy(() -> SpecFields.capacity("2"))
        .hasMessage("spec.capacity must be an integer");
  }

  @Test
  void aBrokerSpecHasExactlyOneKind() throws Invalid {
    assertThat(SpecFields.brokerKind(null)).isEmpty();
    assertThat(SpecFields.brokerKind(Map.of("brokerJobSpec", Map.of())))
        .isEqualTo(Optional.of("brokerJobSpec"));
    assertThatThrownBy(() -> SpecFields.brokerKind(Map.of("brokerPodSpec", 1, "brokerJobSpec", 2)))
        .hasMessage("spec.brokerSpec must have exactly one of brokerPodSpec and brokerJobSpec");
    assertThatThrownBy(() -> SpecFields.brokerKind("pod"))
        .hasMessage("spec.brokerSpec must be a mapping");
  }

  @Test
  void brokerPropertiesAreScalarsAsText() throws Invalid {
    assertThat(SpecFields.brokerProperties(null, true)).isEmpty();
    assertThat(SpecFields.brokerProperties(Collections.singletonMap("EMPTY", null), true))
        .containsEntry("EMPTY", "");
    assertThat(SpecFields.brokerProperties(Map.of("N", 3, "B", true), false))
        .containsEntry("N", "3")
        .containsEntry("B", "true");
    assertThatThrownBy(() -> SpecFields.brokerProperties(Map.of("N", 3), true))
        .hasMessage("spec.brokerProperties.N must be a string but is 3 (quote it: \"3\")");
    assertThatThrownBy(() -> SpecFields.brokerProperties(Map.of("L", List.of("x")), false))
        .hasMessage("spec.brokerProperties.L must be a string");
  }
}
