package io.jakri.crd;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

class SlotUsageTest {

  @ParameterizedTest
  @ValueSource(strings = {"", "node-a", "C:widget-1a2b3c-0:node-a", "C:a:b:c:node-x"})
  void printParsesBackToTheSameWireForm(String wire) {
    assertThat(SlotUsage.parse(wire).print()).isEqualTo(wire);
  }

  @Test
  void parsesEachKind() {
    assertThat(SlotUsage.parse("")).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(SlotUsage.parse("node-a")).isEqualTo(new SlotUsage.NodeUse("node-a"));
    assertThat(SlotUsage.parse("C:x-0:node-a")).isEqualTo(new SlotUsage.ClassUse("x-0", "node-a"));
  }

  @Test
  void heldByComparesTheNode() {
    assertThat(SlotUsage.parse("C:x-0:node-a").heldBy("node-a")).isTrue();
    assertThat(SlotUsage.parse("node-a").heldBy("node-b")).isFalse();
    assertThat(SlotUsage.Free.INSTANCE.heldBy("node-a")).isFalse();
  }

  @Test
  void malformedClassUsageIsRejected() {
    assertThatThrownBy(() -> SlotUsage.parse("C:")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SlotUsage.parse("C:x-0:"))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void claimUsageNamesTheResourceClaimAndTheNode() {
    SlotUsage u = SlotUsage.parse("D:0f3c9a4e-1b2c-4d5e-8f90-123456789abc:node-a");
    assertThat(u)
        .isEqualTo(new SlotUsage.ClaimUse("0f3c9a4e-1b2c-4d5e-8f90-123456789abc", "node-a"));
    assertThat(u.print()).isEqualTo("D:0f3c9a4e-1b2c-4d5e-8f90-123456789abc:node-a");
    assertThat(u.heldBy("node-a")).isTrue();
    assertThat(u.heldBy("node-b")).isFalse();
    assertThatThrownBy(() -> SlotUsage.parse("D:")).isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> SlotUsage.parse("D:uid:"))
        .isInstanceOf(IllegalArgumentException.class);
    assertThatThrownBy(() -> new SlotUsage.NodeUse("D:uid:node-a"))
        .isInstanceOf(IllegalArgumentException.class);
  }
}
