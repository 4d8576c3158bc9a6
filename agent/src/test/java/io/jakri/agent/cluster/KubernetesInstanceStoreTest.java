package io.jakri.agent.cluster;

import static org.assertj.core.api.Assertions.assertThat;

import io.fabric8.kubernetes.api.model.ObjectMetaBuilder;
import io.jakri.agent.instance.Instance;
import io.jakri.crd.InstanceSpec;
import io.jakri.crd.SlotUsage;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

class KubernetesInstanceStoreTest {

  @Test
  void anInstanceSurvivesTheRoundTripThroughTheResourceInAkrisWireFormat() {
    Instance instance =
        new Instance(
            "cams-8120fe",
            "cams",
            3,
            true,
            new TreeSet<>(List.of("n2", "n1")),
            Map.of(
                "cams-8120fe-0", new SlotUsage.NodeUse("n1"),
                "cams-8120fe-2", new SlotUsage.ClassUse("cams-8120fe-2", "n2")),
            Map.of("IP", "10.0.0.1"),
            41);

    InstanceSpec spec = KubernetesInstanceStore.spec(instance);
    assertThat(spec.getCdiName()).isEqualTo("akri.sh/cams=8120fe");
    assertThat(spec.getNodes()).containsExactly("n1", "n2");
    assertThat(spec.getDeviceUsage())
        .containsExactly(
            Map.entry("cams-8120fe-0", "n1"),
            Map.entry("cams-8120fe-1", ""),
            Map.entry("cams-8120fe-2", "C:cams-8120fe-2:n2"));

    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder().withName("cams-8120fe").withResourceVersion("41").build());
    resource.setSpec(spec);
    assertThat(KubernetesInstanceStore.toInstance(resource)).isEqualTo(instance);
  }

  @Test
  void malformedUsageWrittenBySomeoneElseReadsAsFreeInsteadOfBreakingTheCache() {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("cams");
    spec.setCapacity(2);
    Map<String, String> usage = new LinkedHashMap<>();
    usage.put("cams-aaaaaa-0", "C:broken");
    usage.put("cams-aaaaaa-1", "n1");
    spec.setDeviceUsage(usage);
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder().withName("cams-aaaaaa").withResourceVersion("7").build());
    resource.setSpec(spec);

    Instance read = KubernetesInstanceStore.toInstance(resource);

    assertThat(read.deviceUsage())
        .containsEntry("cams-aaaaaa-0", SlotUsage.Free.INSTANCE)
        .containsEntry("cams-aaaaaa-1", new SlotUsage.NodeUse("n1"));
    assertThat(read.version()).isEqualTo(7);
  }

  private static Instance cams(Map<String, SlotUsage> usage) {
    return new Instance(
        "cams-8120fe",
        "cams",
        3,
        false,
        new TreeSet<>(List.of("n1")),
        usage,
        Map.of("IP", "10.0.0.1"),
        41);
  }

  private static KubernetesInstanceStore.Cached cached(Instance instance) {
    io.jakri.crd.Instance resource = new io.jakri.crd.Instance();
    resource.setMetadata(
        new ObjectMetaBuilder()
            .withName(instance.name())
            .withResourceVersion(Long.toString(instance.version()))
            .build());
    resource.setSpec(KubernetesInstanceStore.spec(instance));
    return new KubernetesInstanceStore.Cached(instance, resource);
  }

  @Test
  void aClaimIsWrittenAsAPatchOfItsSlotThatPinsTheResourceVersionItWasComputedFrom() {
    Instance base = cams(Map.of("cams-8120fe-0", new SlotUsage.NodeUse("n2")));
    Map<String, SlotUsage> usage = new LinkedHashMap<>(base.deviceUsage());
    usage.put("cams-8120fe-1", new SlotUsage.NodeUse("n1"));
    usage.put("cams-8120fe-0", SlotUsage.Free.INSTANCE);

    List<Map<String, Object>> ops =
        KubernetesInstanceStore.patchOps(cached(base), base.withUsage(usage)).orElseThrow();

    assertThat(ops)
        .containsExactly(
            Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", "41"),
            Map.of("op", "add", "path", "/spec/deviceUsage/cams-8120fe-0", "value", ""),
            Map.of("op", "add", "path", "/spec/deviceUsage/cams-8120fe-1", "value", "n1"));
  }

  @Test
  void aJoinIsWrittenAsAPatchOfTheNodeList() {
    Instance base = cams(Map.of());

    List<Map<String, Object>> ops =
        KubernetesInstanceStore.patchOps(
                cached(base), base.withNodes(new TreeSet<>(List.of("n1", "n0"))))
            .orElseThrow();

    assertThat(ops)
        .containsExactly(
            Map.of("op", "replace", "path", "/metadata/resourceVersion", "value", "41"),
            Map.of("op", "add", "path", "/spec/nodes", "value", List.of("n0", "n1")));
  }

  @Test
  void changesBeyondSlotsAndNodesAreWrittenAsAWholeReplacement() {
    Instance base = cams(Map.of());

    assertThat(KubernetesInstanceStore.patchOps(cached(base), base.withSpec(2, Map.of("IP", "x"))))
        .isEmpty();
    assertThat(
            KubernetesInstanceStore.patchOps(
                cached(base), base.withSpec(3, Map.of("IP", "10.0.0.2"))))
        .isEmpty();
    // A resource whose usage keys differ from the slots (written by someone else) is replaced
    // whole, so the stray keys go.
    KubernetesInstanceStore.Cached odd = cached(base);
    odd.resource().getSpec().getDeviceUsage().put("cams-8120fe-7", "n9");
    assertThat(KubernetesInstanceStore.patchOps(odd, base)).isEmpty();
  }

  // ---- guards: a slot another node holds is not freed here by a third party's write

  /** A resource of Instance x-aaaaaa (capacity 2) at {@code version}. */
  private static io.jakri.crd.Instance resource(
      String uid, long version, List<String> nodes, Map<String, String> usage, String released) {
    InstanceSpec spec = new InstanceSpec();
    spec.setConfigurationName("x");
    spec.setCapacity(2);
    spec.setNodes(nodes);
    spec.setDeviceUsage(new LinkedHashMap<>(usage));
    ObjectMetaBuilder meta =
        new ObjectMetaBuilder()
            .withName("x-aaaaaa")
            .withUid(uid)
            .withResourceVersion(Long.toString(version));
    if (released != null) {
      meta.addToAnnotations(KubernetesInstanceStore.RELEASED_ANNOTATION, released);
    }
    io.jakri.crd.Instance r = new io.jakri.crd.Instance();
    r.setMetadata(meta.build());
    r.setSpec(spec);
    return r;
  }

  private static KubernetesInstanceStore.Cached seen(io.jakri.crd.Instance r) {
    return new KubernetesInstanceStore.Cached(KubernetesInstanceStore.toInstance(r), r);
  }

  private static KubernetesInstanceStore.Cached next(
      KubernetesInstanceStore.Cached previous, io.jakri.crd.Instance r) {
    return KubernetesInstanceStore.guard(previous, r, KubernetesInstanceStore.toInstance(r), "n2");
  }

  private static final Map<String, String> HELD_BY_N1 = Map.of("x-aaaaaa-0", "n1");
  private static final Map<String, String> FREE = Map.of("x-aaaaaa-0", "");

  @Test
  void aSlotOfAnotherNodeFreedByAHandEditStaysHeldInThisNodesViewUntilTheHolderClaimsItAgain() {
    KubernetesInstanceStore.Cached held =
        seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, null));

    KubernetesInstanceStore.Cached edited =
        next(held, resource("u1", 11, List.of("n1", "n2"), FREE, null));
    assertThat(edited.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(edited.guards()).containsKey("x-aaaaaa-0");

    // An unrelated change keeps the guard and the version it counts from.
    KubernetesInstanceStore.Cached later =
        next(edited, resource("u1", 12, List.of("n1", "n2", "n3"), FREE, null));
    assertThat(later.guards().get("x-aaaaaa-0").since()).isEqualTo(10);
    assertThat(later.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));

    KubernetesInstanceStore.Cached reclaimed =
        next(later, resource("u1", 13, List.of("n1", "n2", "n3"), HELD_BY_N1, null));
    assertThat(reclaimed.guards()).isEmpty();
    assertThat(reclaimed.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
  }

  @Test
  void aSlotItsHolderFreedItselfIsFreeAtOnceButAStaleReleaseEntryConfirmsNothing() {
    KubernetesInstanceStore.Cached held =
        seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, "x-aaaaaa-0=n1@4"));

    // The holder's own free, based on version 10, records n1@10.
    KubernetesInstanceStore.Cached freed =
        next(held, resource("u1", 11, List.of("n1", "n2"), FREE, "x-aaaaaa-0=n1@10"));
    assertThat(freed.guards()).isEmpty();
    assertThat(freed.value().deviceUsage().get("x-aaaaaa-0")).isEqualTo(SlotUsage.Free.INSTANCE);

    // A hand edit keeping an entry from an earlier free (before the claim seen at 10): guarded.
    KubernetesInstanceStore.Cached edited =
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
    KubernetesInstanceStore.Cached held =
        seen(resource("u1", 10, List.of("n1", "n2"), HELD_BY_N1, null));

    // The holder left (or the controller removed it, a dead node): its slots are free.
    assertThat(next(held, resource("u1", 11, List.of("n2"), FREE, null)).guards()).isEmpty();

    // Deleted and created again (another uid) without n1 and its claim: guarded until n1 claims
    // it again or frees it itself, even though n1 is not listed.
    KubernetesInstanceStore.Cached recreated =
        next(held, resource("u2", 15, List.of("n2"), FREE, null));
    assertThat(recreated.value().deviceUsage().get("x-aaaaaa-0"))
        .isEqualTo(new SlotUsage.NodeUse("n1"));
    assertThat(next(recreated, resource("u2", 16, List.of("n1", "n2"), FREE, null)).guards())
        .containsKey("x-aaaaaa-0");
    assertThat(next(recreated, resource("u2", 16, List.of("n1", "n2"), HELD_BY_N1, null)).guards())
        .isEmpty();
  }

  @Test
  void thisNodesOwnSlotsAreNeverGuardedHere() {
    KubernetesInstanceStore.Cached held =
        seen(resource("u1", 10, List.of("n1", "n2"), Map.of("x-aaaaaa-1", "n2"), null));
    KubernetesInstanceStore.Cached edited =
        next(held, resource("u1", 11, List.of("n1", "n2"), Map.of("x-aaaaaa-1", ""), null));
    assertThat(edited.guards()).isEmpty();
    assertThat(edited.value().deviceUsage().get("x-aaaaaa-1")).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void aWriteRecordsTheSlotsThisNodeFreesAndDropsTheEntriesOfSlotsClaimedAgain() {
    KubernetesInstanceStore.Cached current =
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
    assertThat(KubernetesInstanceStore.releasedAnnotations(current, freeAndClaim, "n1"))
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
    assertThat(KubernetesInstanceStore.releasedAnnotations(current, claimOnly, "n2"))
        .hasValueSatisfying(
            a -> assertThat(a).doesNotContainKey(KubernetesInstanceStore.RELEASED_ANNOTATION));
    // A write that frees nothing and claims nothing leaves the annotation alone.
    assertThat(KubernetesInstanceStore.releasedAnnotations(current, base, "n1")).isEmpty();
  }
}
