package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import ch.qos.logback.classic.Level;
import io.jakri.agent.LogCapture;
import io.jakri.crd.SlotUsage;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** Slot rule 3: a slot another node holds is not freed here by a third party's write. */
class HolderOnlyReleaseTest {

  /** A resource of Instance x-aaaaaa (capacity 2) at {@code version}. */
  private static io.jakri.crd.Instance resource(
      String uid, long version, List<String> nodes, Map<String, String> usage, String released) {
    return InstanceResourceFixture.resource(null, uid, version, nodes, usage, released);
  }

  private static CachedInstance seen(io.jakri.crd.Instance r) {
    return InstanceResourceFixture.seen(r);
  }

  private static CachedInstance next(CachedInstance previous, io.jakri.crd.Instance r) {
    return HolderOnlyRelease.guard(previous, r, InstanceResources.toInstance(r), "n2");
  }

  private static final Map<String, String> HELD_BY_N1 = Map.of("x-aaaaaa-0", "n1");
  private static final Map<String, String> FREE = Map.of("x-aaaaaa-0", "");

  @Test
  void aSlotOfAnotherNodeFreedByAHandEditStaysHeldInThisNodesViewUntilTheHolderClaimsItAgain() {
    CachedInstance held = seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, null));

    CachedInstance edited = next(held, resource("u1", 11, List.of("n1", "n2"), FREE, null));
    assertThat(edited.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(edited.guards()).containsKey("x-aaaaaa-0");

    // An unrelated change keeps the guard and the version it counts from.
    CachedInstance later = next(edited, resource("u1", 12, List.of("n1", "n2", "n3"), FREE, null));
    assertThat(later.guards().get("x-aaaaaa-0").since()).isEqualTo(10);
    assertThat(later.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));

    CachedInstance reclaimed =
        next(later, resource("u1", 13, List.of("n1", "n2", "n3"), HELD_BY_N1, null));
    assertThat(reclaimed.guards()).isEmpty();
    assertThat(reclaimed.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
  }

  @Test
  void aSlotItsHolderFreedItselfIsFreeAtOnceButAStaleReleaseEntryConfirmsNothing() {
    CachedInstance held =
        seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, "x-aaaaaa-0=n1@4"));

    // The holder's own free, based on version 10, records n1@10.
    CachedInstance freed =
        next(held, resource("u1", 11, List.of("n1", "n2"), FREE, "x-aaaaaa-0=n1@10"));
    assertThat(freed.guards()).isEmpty();
    assertThat(freed.value().deviceUsage().get("x-aaaaaa-0")).isEqualTo(SlotUsage.Free.INSTANCE);

    // A hand edit keeping an entry from an earlier free (before the claim seen at 10): guarded.
    CachedInstance edited =
        next(held, resource("u1", 11, List.of("n1", "n2"), FREE, "x-aaaaaa-0=n1@4"));
    assertThat(edited.guards()).containsKey("x-aaaaaa-0");
    // An entry naming another node confirms nothing either.
    assertThat(
            next(held, resource("u1", 11, List.of("n1", "n2"), FREE, "x-aaaaaa-0=n3@10")).guards())
        .containsKey("x-aaaaaa-0");
    // The holder confirms later by freeing the slot itself (its write is based on version 12).
    assertThat(
            next(edited, resource("u1", 13, List.of("n1", "n2"), FREE, "x-aaaaaa-0=n1@12"))
                .guards())
        .isEmpty();
  }

  @Test
  void aSlotWhoseHolderWasRemovedFromNodesIsFreeButARecreatedObjectKeepsTheOldClaimsGuarded() {
    CachedInstance held = seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, null));

    // The holder left (or the controller removed it, a dead node): its slots are free.
    assertThat(next(held, resource("u1", 11, List.of("n2"), FREE, null)).guards()).isEmpty();

    // Deleted and created again (another uid) without n1 and its claim: guarded until n1 claims
    // it again or frees it itself, even though n1 is not listed.
    CachedInstance recreated = next(held, resource("u2", 15, List.of("n2"), FREE, null));
    assertThat(recreated.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(next(recreated, resource("u2", 16, List.of("n1", "n2"), FREE, null)).guards())
        .containsKey("x-aaaaaa-0");
    assertThat(next(recreated, resource("u2", 16, List.of("n1", "n2"), HELD_BY_N1, null)).guards())
        .isEmpty();
  }

  @Test
  void thisNodesOwnSlotsAreNeverGuardedHere() {
    CachedInstance held =
        seen(resource("u1", 10, List.of("n1", "n2"), Map.of("x-aaaaaa-1", "n2"), null));
    CachedInstance edited =
        next(held, resource("u1", 11, List.of("n1", "n2"), Map.of("x-aaaaaa-1", ""), null));
    assertThat(edited.guards()).isEmpty();
    assertThat(edited.value().deviceUsage().get("x-aaaaaa-1")).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void theHolderOfAClaimIsTheNodeItNamesAndAFreeSlotHasNone() {
    assertThat(HolderOnlyRelease.holder(new SlotUsage.NodeUse("n1"))).isEqualTo("n1");
    assertThat(HolderOnlyRelease.holder(new SlotUsage.ClassUse("x-aaaaaa-0", "n2")))
        .isEqualTo("n2");
    assertThat(HolderOnlyRelease.holder(new SlotUsage.ClaimUse("4f1c", "n3"))).isEqualTo("n3");
    assertThatThrownBy(() -> HolderOnlyRelease.holder(SlotUsage.Free.INSTANCE))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void aNewGuardIsLoggedOnceAsAWarningAndItsSettlingAsInfo() {
    CachedInstance held = seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, null));
    CachedInstance edited = next(held, resource("u1", 11, List.of("n1", "n2"), FREE, null));
    CachedInstance later = next(edited, resource("u1", 12, List.of("n1", "n2"), FREE, null));
    CachedInstance reclaimed =
        next(later, resource("u1", 13, List.of("n1", "n2"), HELD_BY_N1, null));

    try (LogCapture log = LogCapture.of(KubernetesInstanceStore.class.getName(), Level.INFO)) {
      HolderOnlyRelease.logGuards(held, edited, "n2");
      HolderOnlyRelease.logGuards(edited, later, "n2");
      HolderOnlyRelease.logGuards(later, reclaimed, "n2");

      assertThat(log.messages())
          .containsExactly(
              "instance x-aaaaaa: slot x-aaaaaa-0 held by n1 was freed by someone else; node n2"
                  + " does not grant it until n1 frees it itself or claims it again",
              "instance x-aaaaaa: slot x-aaaaaa-0 settled: held by n1");
    }
  }
}
