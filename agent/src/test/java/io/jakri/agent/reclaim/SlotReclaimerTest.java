package io.jakri.agent.reclaim;

import static org.assertj.core.api.Assertions.assertThat;

import io.jakri.agent.MutableClock;
import io.jakri.agent.allocation.LocalClaims;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

class SlotReclaimerTest {

  private static final String NODE = "node-a";
  private static final String INSTANCE = "cam-a1b2c3";
  private static final String SLOT0 = INSTANCE + "-0";
  private static final String SLOT1 = INSTANCE + "-1";
  private static final String INSTANCE_RESOURCE = "akri.sh/" + INSTANCE;
  private static final Duration GRACE = Duration.ofSeconds(20);

  private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));
  private final FakePodResources kubelet = new FakePodResources();
  private final InMemoryInstanceStore store = new InMemoryInstanceStore();
  private final InstanceUpdates updates =
      new InstanceUpdates(store, new Random(1), 5, Duration.ofMillis(1));
  private final LocalClaims claims = new LocalClaims(NODE);
  private ScheduledExecutorService scheduler;
  private SlotReclaimer reclaimer;

  @BeforeEach
  void setUp() throws StoreException {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    // A period far beyond any test: rounds run only when a test calls runOnce().
    reclaimer =
        new SlotReclaimer(
            NODE,
            kubelet,
            updates,
            scheduler,
            clock,
            GRACE,
            Duration.ofHours(1),
            claims,
            (resource, id) -> Optional.empty());
    reclaimer.start();
    store.create(Instance.create(INSTANCE, "cam", 2, true, NODE, Map.of()));
  }

  @AfterEach
  void tearDown() {
    reclaimer.close();
    scheduler.shutdownNow();
  }

  /** Sets a slot's usage as its holder's own write does: this node's record follows its claims. */
  private void hold(String slot, SlotUsage usage) throws StoreException {
    if (usage.heldBy(NODE)) {
      claims.hold(INSTANCE, slot, usage);
    } else {
      claims.release(INSTANCE, slot);
    }
    set(slot, usage);
  }

  /** Sets a slot's usage in the store only, as a hand edit does. */
  private void set(String slot, SlotUsage usage) throws StoreException {
    updates.apply(
        INSTANCE,
        current -> {
          Map<String, SlotUsage> u = new LinkedHashMap<>(current.orElseThrow().deviceUsage());
          u.put(slot, usage);
          return Optional.of(current.get().withUsage(u));
        });
  }

  private SlotUsage usage(String slot) throws StoreException {
    return store.get(INSTANCE).orElseThrow().deviceUsage().get(slot);
  }

  private void after(Duration d) {
    clock.advance(d);
    reclaimer.runOnce();
  }

  @Test
  void unusedSlotIsFreedOnceTheGracePeriodHasPassedAndNotBefore() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    after(Duration.ofSeconds(19));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
    assertThat(reclaimer.reclaimed()).isZero();

    after(Duration.ofSeconds(1));
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(reclaimer.reclaimed()).isEqualTo(1);
  }

  @Test
  void aSlotHeldForAResourceClaimIsLeftToTheKubeletsUnprepare() throws Exception {
    SlotUsage claim = new SlotUsage.ClaimUse("0f3c9a4e-1b2c-4d5e-8f90-123456789abc", NODE);
    hold(SLOT0, claim);
    hold(SLOT1, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(3));
    // PodResources never lists DRA devices among device-plugin ones: the claim's slot stays.
    assertThat(usage(SLOT0)).isEqualTo(claim);
    assertThat(usage(SLOT1)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(reclaimer.reclaimed()).isEqualTo(1);
  }

  @Test
  void slotOfARunningContainerIsKeptPastTheGracePeriod() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    kubelet.answer(new DeviceInUse(INSTANCE_RESOURCE, SLOT0));
    for (int i = 0; i < 10; i++) {
      after(Duration.ofSeconds(10));
    }
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
    assertThat(reclaimer.reclaimed()).isZero();
  }

  @Test
  void onlyTheUnusedOneOfTwoHeldSlotsIsFreed() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    hold(SLOT1, new SlotUsage.NodeUse(NODE));
    kubelet.answer(new DeviceInUse(INSTANCE_RESOURCE, SLOT1));
    reclaimer.runOnce();
    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.NodeUse(NODE));
  }

  @Test
  void slotSeenInUseAgainRestartsItsGracePeriod() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    kubelet.answer(new DeviceInUse(INSTANCE_RESOURCE, SLOT0));
    after(Duration.ofSeconds(10));
    kubelet.answer();
    after(Duration.ofSeconds(5)); // unused again from t=15s
    after(Duration.ofSeconds(15)); // t=30s: 35 s since first seen unused, but only 15 s in a row
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));

    after(Duration.ofSeconds(5)); // t=35s: 20 s in a row
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void classSlotIsKeptWhileUsedThroughItsClassAndFreedAfterward() throws Exception {
    hold(SLOT0, new SlotUsage.ClassUse(SLOT0, NODE));
    kubelet.answer(new DeviceInUse("example.com/widget", SLOT0));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(2));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.ClassUse(SLOT0, NODE));

    kubelet.answer();
    after(Duration.ofSeconds(1));
    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(reclaimer.reclaimed()).isEqualTo(1);
  }

  @Test
  void classSlotWhoseClassDeviceIdIsInUseIsKept() throws Exception {
    // Akri writes C:<vdev>:<node> with its own class device id; that id counts as well.
    hold(SLOT0, new SlotUsage.ClassUse("cam-vdev-7", NODE));
    kubelet.answer(new DeviceInUse("akri.sh/cam", "cam-vdev-7"));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(2));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.ClassUse("cam-vdev-7", NODE));
  }

  @Test
  void slotInUseUnderTheOtherResourceKindIsKeptToStaySafe() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    hold(SLOT1, new SlotUsage.ClassUse(SLOT1, NODE));
    kubelet.answer(
        new DeviceInUse("akri.sh/cam", SLOT0), new DeviceInUse(INSTANCE_RESOURCE, SLOT1));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(2));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.ClassUse(SLOT1, NODE));
  }

  @Test
  void slotsHeldByAnotherNodeAreNeverFreed() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse("node-b"));
    hold(SLOT1, new SlotUsage.ClassUse(SLOT1, "node-b"));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(5));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse("node-b"));
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.ClassUse(SLOT1, "node-b"));
    assertThat(reclaimer.reclaimed()).isZero();
  }

  @Test
  void aSlotNamedForThisNodeThatThisNodeNeverClaimedIsNeverFreed() throws Exception {
    // A hand edit or a forged holder: freeing it would record this node's release and let every
    // node take a slot another node's pod may use.
    set(SLOT0, new SlotUsage.NodeUse(NODE));
    set(SLOT1, new SlotUsage.ClassUse(SLOT1, NODE));
    reclaimer.runOnce();
    after(GRACE.multipliedBy(3));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.ClassUse(SLOT1, NODE));
    assertThat(reclaimer.reclaimed()).isZero();
  }

  @Test
  void failedListFreesNothingAndRestartsTheGracePeriod() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    kubelet.fail("connection refused");
    after(GRACE);
    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));

    kubelet.answer();
    after(Duration.ofSeconds(1)); // seen unused again, but the outage was a blind spot
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void slotFreedAndClaimedAgainBetweenRoundsGetsAFreshGracePeriod() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    clock.advance(Duration.ofSeconds(15));
    // Another path frees it and a new Allocate claims it; the new pod is not listed yet.
    hold(SLOT0, SlotUsage.Free.INSTANCE);
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    after(Duration.ofSeconds(5)); // t=20s: same holder as at t=0, but not continuously
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));

    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void slotHeldDifferentlyBetweenRoundsGetsAFreshGracePeriod() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    clock.advance(Duration.ofSeconds(15));
    hold(SLOT0, new SlotUsage.ClassUse(SLOT0, NODE));
    after(Duration.ofSeconds(5));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.ClassUse(SLOT0, NODE));

    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void slotReleasedByItsHolderMeanwhileIsNotCountedAsReclaimed() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    hold(SLOT0, SlotUsage.Free.INSTANCE);
    after(GRACE);
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(reclaimer.reclaimed()).isZero();
  }

  @Test
  void closedReclaimerFreesNothing() throws Exception {
    hold(SLOT0, new SlotUsage.NodeUse(NODE));
    reclaimer.runOnce();
    reclaimer.close();
    after(GRACE.multipliedBy(2));
    assertThat(usage(SLOT0)).isEqualTo(new SlotUsage.NodeUse(NODE));
  }

  @Test
  void periodIsAQuarterOfTheGraceWithinBounds() {
    assertThat(SlotReclaimer.periodFor(Duration.ofSeconds(20))).isEqualTo(Duration.ofSeconds(5));
    assertThat(SlotReclaimer.periodFor(Duration.ofMinutes(5))).isEqualTo(Duration.ofSeconds(5));
    assertThat(SlotReclaimer.periodFor(Duration.ofMillis(300))).isEqualTo(Duration.ofMillis(75));
    assertThat(SlotReclaimer.periodFor(Duration.ZERO)).isEqualTo(Duration.ofMillis(50));
  }
}
