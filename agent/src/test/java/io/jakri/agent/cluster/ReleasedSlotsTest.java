package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceSpec;
import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** The released-slots annotation: the slots their holders freed themselves. */
class ReleasedSlotsTest {

  /** A resource of Instance x-aaaaaa (capacity 2) at {@code version}. */
  private static io.jakri.crd.Instance resource(
      String uid, long version, List<String> nodes, Map<String, String> usage, String released) {
    return InstanceResourceFixture.resource(null, uid, version, nodes, usage, released);
  }

  private static CachedInstance seen(io.jakri.crd.Instance r) {
    return InstanceResourceFixture.seen(r);
  }

  @Test
  void aWriteRecordsTheSlotsThisNodeFreesAndDropsTheEntriesOfSlotsClaimedAgain() {
    CachedInstance current =
        seen(
            resource(
                "u1",
                10,
                List.of("n1", "n2"),
                Map.of("x-aaaaaa-0", "n1", "x-aaaaaa-1", ""),
                "x-aaaaaa-1=n2@3"));
    Instance base = current.value();

    Instance freeAndClaim =
        base.withUsage(
            Map.of(
                "x-aaaaaa-0", SlotUsage.Free.INSTANCE, "x-aaaaaa-1", new SlotUsage.NodeUse("n2")));
    assertThat(ReleasedSlots.releasedAnnotations(current, freeAndClaim, "n1"))
        .hasValueSatisfying(
            a ->
                assertThat(a)
                    .containsEntry(
                        KubernetesInstanceStore.RELEASED_ANNOTATION, "x-aaaaaa-0=n1@10"));
    // n2 frees nothing it held: only the claim drops the stale entry.
    Instance claimOnly =
        base.withUsage(
            Map.of(
                "x-aaaaaa-0",
                new SlotUsage.NodeUse("n1"),
                "x-aaaaaa-1",
                new SlotUsage.NodeUse("n2")));
    assertThat(ReleasedSlots.releasedAnnotations(current, claimOnly, "n2"))
        .hasValueSatisfying(
            a -> assertThat(a).doesNotContainKey(KubernetesInstanceStore.RELEASED_ANNOTATION));
    // A write that frees nothing and claims nothing leaves the annotation alone.
    assertThat(ReleasedSlots.releasedAnnotations(current, base, "n1")).isEmpty();
  }

  @Test
  void malformedEntriesAreLeftOutAndConfirmNothing() {
    io.jakri.crd.Instance r =
        resource(
            "u1",
            10,
            List.of("n1"),
            Map.of(),
            "x-aaaaaa-0=n1@7,=n1@3,x-aaaaaa-1=@4,x-aaaaaa-1=n2@x,junk,x-aaaaaa-1=n1@9");

    assertThat(ReleasedSlots.releases(r))
        .containsExactly(
            Map.entry("x-aaaaaa-0", new ReleasedSlots.Release("n1", 7)),
            Map.entry("x-aaaaaa-1", new ReleasedSlots.Release("n1", 9)));
    assertThat(ReleasedSlots.releases(resource("u1", 10, List.of(), Map.of(), null))).isEmpty();
  }

  @Test
  void theAnnotationKeepsTheNewestEntriesUpToItsLimit() {
    int capacity = ReleasedSlots.MAX_RELEASES + 2;
    StringBuilder held = new StringBuilder();
    Map<String, SlotUsage> free = new LinkedHashMap<>();
    for (int n = 0; n < capacity; n++) {
      // Entries of all slots but the last, based on versions 1, 2, ...; the last slot is held.
      if (n < capacity - 1) {
        held.append(n == 0 ? "" : ",").append("x-aaaaaa-").append(n).append("=n2@").append(n + 1);
      }
      free.put("x-aaaaaa-" + n, SlotUsage.Free.INSTANCE);
    }
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("x");
    spec.setCapacity(capacity);
    Map<String, String> usage = new LinkedHashMap<>();
    free.keySet().forEach(slot -> usage.put(slot, ""));
    usage.put("x-aaaaaa-" + (capacity - 1), "n1");
    spec.setDeviceUsage(usage);
    io.jakri.crd.Instance r = new io.jakri.crd.Instance();
    r.setMetadata(
        new ObjectMetaBuilder()
            .withName("x-aaaaaa")
            .withResourceVersion("1000")
            .addToAnnotations(ReleasedSlots.ANNOTATION, held.toString())
            .build());
    r.setSpec(spec);
    CachedInstance current = seen(r);

    // n1 frees the last slot: its entry (based on 1000) is the newest; the two oldest go.
    Map<String, String> annotations =
        ReleasedSlots.releasedAnnotations(current, current.value().withUsage(free), "n1")
            .orElseThrow();

    Map<String, ReleasedSlots.Release> kept = ReleasedSlots.releases(r("x-aaaaaa", annotations));
    assertThat(kept).hasSize(ReleasedSlots.MAX_RELEASES);
    assertThat(kept).doesNotContainKeys("x-aaaaaa-0", "x-aaaaaa-1");
    assertThat(kept.get("x-aaaaaa-2")).isEqualTo(new ReleasedSlots.Release("n2", 3));
    assertThat(kept.get("x-aaaaaa-" + (capacity - 1)))
        .isEqualTo(new ReleasedSlots.Release("n1", 1000));
  }

  private static io.jakri.crd.Instance r(String name, Map<String, String> annotations) {
    io.jakri.crd.Instance r = new io.jakri.crd.Instance();
    r.setMetadata(new ObjectMetaBuilder().withName(name).withAnnotations(annotations).build());
    return r;
  }
}
