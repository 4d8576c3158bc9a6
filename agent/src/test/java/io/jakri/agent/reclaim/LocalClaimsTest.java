package io.jakri.agent.reclaim;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.jakri.agent.MutableClock;
import io.jakri.agent.allocation.ClaimKeeper;
import io.jakri.agent.allocation.LocalClaims;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.time.Instant;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A node's own record of its claims ({@link LocalClaims}) as the slot reclaimer feeds it from
 * PodResources, and as {@link ClaimKeeper} writes it back into an Instance that lost it.
 */
class LocalClaimsTest {

  private static final String NODE = "node-a";
  private static final String INSTANCE = "cam-a1b2c3";
  private static final String SLOT0 = INSTANCE + "-0";
  private static final String SLOT1 = INSTANCE + "-1";
  private static final String INSTANCE_RESOURCE = "akri.sh/" + INSTANCE;
  private static final String CLASS_RESOURCE = "akri.sh/cam";
  private static final Duration GRACE = Duration.ofSeconds(20);

  private final MutableClock clock = new MutableClock(Instant.parse("2025-01-01T00:00:00Z"));
  private final FakePodResources kubelet = new FakePodResources();
  private final InMemoryInstanceStore store = new InMemoryInstanceStore();
  private final InstanceUpdates updates =
      new InstanceUpdates(store, new Random(1), 5, Duration.ofMillis(1));
  private final LocalClaims claims = new LocalClaims(NODE);
  private ScheduledExecutorService scheduler;
  private ExecutorService writes;
  private SlotReclaimer reclaimer;

  @BeforeEach
  void setUp() throws StoreException {
    scheduler = Executors.newSingleThreadScheduledExecutor();
    writes = Executors.newSingleThreadExecutor();
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
            (resource, id) ->
                resource.equals(INSTANCE_RESOURCE)
                    ? Optional.of(new SlotUsage.NodeUse(NODE))
                    : resource.equals(CLASS_RESOURCE)
                        ? Optional.of(new SlotUsage.ClassUse(id, NODE))
                        : Optional.empty());
    reclaimer.start();
    new ClaimKeeper(claims, updates, writes).start();
    store.create(
        new Instance(
            INSTANCE,
            "cam",
            2,
            true,
            new TreeSet<>(List.of(NODE, "node-b")),
            Map.of(),
            Map.of(),
            0));
  }

  @AfterEach
  void tearDown() {
    reclaimer.close();
    scheduler.shutdownNow();
    writes.shutdownNow();
  }

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

  @Test
  void devicesContainersUseAreRecordedAsThisNodesClaimsAndOtherPluginsDevicesAreNot() {
    kubelet.answer(
        new DeviceInUse(INSTANCE_RESOURCE, SLOT0),
        new DeviceInUse(CLASS_RESOURCE, SLOT1),
        new DeviceInUse("nvidia.com/gpu", "GPU-1234-0"));

    reclaimer.runOnce();

    assertThat(claims.held(INSTANCE))
        .containsExactlyInAnyOrderEntriesOf(
            Map.of(
                SLOT0, new SlotUsage.NodeUse(NODE),
                SLOT1, new SlotUsage.ClassUse(SLOT1, NODE)));
    assertThat(claims.instances()).containsExactly(INSTANCE);
  }

  @Test
  void aSlotInUseThatTheInstanceLostIsWrittenBackByItsHolder() throws Exception {
    kubelet.answer(new DeviceInUse(INSTANCE_RESOURCE, SLOT0));
    reclaimer.runOnce();
    await().atMost(Duration.ofSeconds(5)).until(() -> usage(SLOT0).heldBy(NODE));

    set(SLOT0, SlotUsage.Free.INSTANCE); // a hand edit

    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> new SlotUsage.NodeUse(NODE).equals(usage(SLOT0)));
  }

  @Test
  void aSlotTheReclaimerFreesLeavesTheRecordAndIsNotWrittenBack() throws Exception {
    claims.hold(INSTANCE, SLOT0, new SlotUsage.NodeUse(NODE)); // as Allocate records a grant
    await().atMost(Duration.ofSeconds(5)).until(() -> usage(SLOT0).heldBy(NODE));

    reclaimer.runOnce();
    clock.advance(GRACE);
    reclaimer.runOnce();

    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
    assertThat(claims.held(INSTANCE)).doesNotContainKey(SLOT0);
    // A later change of the Instance does not bring the freed claim back (write-backs run on
    // the single write thread: once a task queued after the change ran, any write-back did).
    set(SLOT1, new SlotUsage.NodeUse("node-b"));
    writes.submit(() -> {}).get();
    assertThat(usage(SLOT0)).isEqualTo(SlotUsage.Free.INSTANCE);
  }

  @Test
  void aClaimGivenToAnotherNodeByHandIsWrittenBackOnceThenAnUnusedOneIsForgotten()
      throws Exception {
    claims.hold(INSTANCE, SLOT1, new SlotUsage.NodeUse(NODE));
    await().atMost(Duration.ofSeconds(5)).until(() -> usage(SLOT1).heldBy(NODE));

    set(SLOT1, new SlotUsage.NodeUse("node-b")); // a hand edit: node-b never claimed it
    await()
        .atMost(Duration.ofSeconds(5))
        .until(() -> new SlotUsage.NodeUse(NODE).equals(usage(SLOT1)));

    // The same other holder again (as when two nodes both record the slot): left alone, so two
    // agents never overwrite each other in a loop (write-backs run on the single write thread).
    set(SLOT1, new SlotUsage.NodeUse("node-b"));
    writes.submit(() -> {}).get();
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.NodeUse("node-b"));

    reclaimer.runOnce(); // no container uses it here: nothing to protect, nothing to write back
    assertThat(claims.held(INSTANCE)).doesNotContainKey(SLOT1);
    assertThat(usage(SLOT1)).isEqualTo(new SlotUsage.NodeUse("node-b"));
  }

  @Test
  void aSlotNamedForThisNodeByHandIsDisownedNotGrantedAndNotFreed() throws Exception {
    SlotUsage mine = new SlotUsage.NodeUse(NODE);
    set(SLOT0, mine); // this node never claimed it

    assertThat(claims.held(INSTANCE)).doesNotContainKey(SLOT0);
    assertThat(claims.grantable(INSTANCE, SLOT0, mine, mine)).isFalse();
    reclaimer.runOnce();
    clock.advance(GRACE.multipliedBy(2));
    reclaimer.runOnce();
    assertThat(usage(SLOT0)).isEqualTo(mine);

    // Freed by hand afterwards: still not this node's to grant (its real holder may use it).
    set(SLOT0, SlotUsage.Free.INSTANCE);
    assertThat(claims.grantable(INSTANCE, SLOT0, SlotUsage.Free.INSTANCE, mine)).isFalse();
    // Until the store shows its holder.
    set(SLOT0, new SlotUsage.NodeUse("node-b"));
    set(SLOT0, SlotUsage.Free.INSTANCE);
    assertThat(claims.grantable(INSTANCE, SLOT0, SlotUsage.Free.INSTANCE, mine)).isTrue();
  }

  @Test
  void claimsOfThisNodeAnInstanceShowsWhenFirstSeenAreAdopted() throws Exception {
    SlotUsage mine = new SlotUsage.NodeUse(NODE);
    set(SLOT0, mine); // written before this (restarted) agent started
    LocalClaims restarted = new LocalClaims(NODE);
    new ClaimKeeper(restarted, updates, writes).start();

    set(SLOT1, new SlotUsage.NodeUse("node-b")); // the first state the new keeper sees
    assertThat(restarted.held(INSTANCE)).containsEntry(SLOT0, mine);
    assertThat(restarted.grantable(INSTANCE, SLOT0, mine, mine)).isTrue();

    set(SLOT1, mine); // after that: never claimed by this node
    assertThat(restarted.held(INSTANCE)).doesNotContainKey(SLOT1);
    assertThat(restarted.grantable(INSTANCE, SLOT1, mine, mine)).isFalse();
  }

  @Test
  void theStoreEchoOfThisNodesOwnClaimIsNotDisowned() throws Exception {
    SlotUsage mine = new SlotUsage.NodeUse(NODE);
    claims.claiming(INSTANCE, SLOT0, mine); // as Allocate announces its write

    set(SLOT0, mine); // the write's echo, seen before the grant is recorded
    assertThat(claims.disowned(INSTANCE, SLOT0)).isFalse();
    claims.hold(INSTANCE, SLOT0, mine);
    assertThat(claims.grantable(INSTANCE, SLOT0, mine, mine)).isTrue();
  }

  /**
   * The echo of this node's own claim observed on another thread while the grant is recorded (the
   * watch thread against the gRPC thread): it must see the claim as being written or as held, never
   * neither. Before the record took one lock, the echo could read "not held" before {@code hold}
   * and "not being written" after it, and disowned the slot just granted (ClusterCostIT's
   * allocate-and-free loop refused an Allocate with "never claimed it").
   */
  @Test
  void theEchoRacingTheGrantOnAnotherThreadIsNeverDisowned() throws Exception {
    SlotUsage mine = new SlotUsage.NodeUse(NODE);
    ExecutorService echoes = Executors.newSingleThreadExecutor();
    try {
      for (int i = 0; i < 20_000; i++) {
        LocalClaims record = new LocalClaims(NODE);
        record.observe(INSTANCE, SLOT0, SlotUsage.Free.INSTANCE, true);
        record.claiming(INSTANCE, SLOT0, mine);
        java.util.concurrent.CountDownLatch go = new java.util.concurrent.CountDownLatch(1);
        java.util.concurrent.Future<Boolean> echo =
            echoes.submit(
                () -> {
                  go.await();
                  return record.observe(INSTANCE, SLOT0, mine, false);
                });
        go.countDown();
        record.hold(INSTANCE, SLOT0, mine);
        assertThat(echo.get()).as("round %d", i).isFalse();
        assertThat(record.grantable(INSTANCE, SLOT0, mine, mine)).as("round %d", i).isTrue();
      }
    } finally {
      echoes.shutdownNow();
    }
  }
}
