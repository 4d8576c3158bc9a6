package io.jakri.handler.opcua;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class RequestSlotsTest {

  private final List<String> grants = new ArrayList<>();

  private RequestSlots.Waiter waiter(String name) {
    return () -> grants.add(name);
  }

  @Test
  void slotsGivenBackGoToTheWaitersInTurnAndEachWaitsOnce() {
    RequestSlots slots = new RequestSlots(2);
    RequestSlots.Waiter a = waiter("a");
    RequestSlots.Waiter b = waiter("b");
    RequestSlots.Waiter c = waiter("c");

    assertThat(slots.acquireOrWait(a)).isTrue();
    assertThat(slots.acquireOrWait(a)).isTrue();
    assertThat(slots.acquireOrWait(b)).isFalse();
    assertThat(slots.acquireOrWait(c)).isFalse();
    assertThat(slots.acquireOrWait(b)).isFalse(); // still once in line, ahead of c

    slots.release();
    slots.release();
    assertThat(grants).containsExactly("b", "c");
    assertThat(slots.used()).isEqualTo(2); // handed over, not freed

    slots.release();
    slots.release();
    assertThat(grants).containsExactly("b", "c");
    assertThat(slots.used()).isZero();
  }

  @Test
  void aForgottenWaiterIsNeverGranted() {
    RequestSlots slots = new RequestSlots(1);
    RequestSlots.Waiter gone = waiter("gone");
    assertThat(slots.acquireOrWait(waiter("a"))).isTrue();
    assertThat(slots.acquireOrWait(gone)).isFalse();

    slots.forget(gone);
    slots.release();

    assertThat(grants).isEmpty();
    assertThat(slots.used()).isZero();
  }

  @Test
  void givingBackASlotNobodyTookIsABug() {
    RequestSlots slots = new RequestSlots(1);

    assertThatThrownBy(slots::release).isInstanceOf(IllegalStateException.class);
    assertThatThrownBy(() -> new RequestSlots(0)).isInstanceOf(IllegalArgumentException.class);
  }
}
