package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;

import java.util.Optional;
import org.junit.jupiter.api.Test;

class InstanceNamesTest {

  @Test
  void sharedDeviceNameMatchesAkri() {
    assertThat(InstanceNames.instanceName("akri-debug-echo-foo", "foo0", true, "node-a"))
        .isEqualTo("akri-debug-echo-foo-8120fe");
  }

  @Test
  void unsharedDeviceHashesTheNodeNameAfterTheId() {
    String onA = InstanceNames.instanceName("c", "foo0", false, "node-a");
    String onB = InstanceNames.instanceName("c", "foo0", false, "node-b");
    assertThat(onA).isNotEqualTo(onB).matches("c-[0-9a-f]{6}");
    assertThat(onA).isEqualTo("c-" + InstanceNames.hash("foo0node-a", Optional.empty()));
  }

  @Test
  void hashIsThreeBytesOfLowercaseHex() {
    assertThat(InstanceNames.hash("anything", Optional.empty())).matches("[0-9a-f]{6}");
  }

  @Test
  void slotIdsAreInstanceDashIndex() {
    assertThat(InstanceNames.slotId("zeroconf-218f68", 0)).isEqualTo("zeroconf-218f68-0");
    assertThat(InstanceNames.slotIndex("zeroconf-218f68-12")).isEqualTo(12);
  }
}
