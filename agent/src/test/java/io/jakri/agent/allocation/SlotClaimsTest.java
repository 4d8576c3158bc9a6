package io.jakri.agent.allocation;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.jakri.agent.deviceplugin.AllocationException;
import io.jakri.agent.instance.InMemoryInstanceStore;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.LocalDevices;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Random;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.Test;

/**
 * {@link SlotClaims} built directly: an in-memory Instance store (or a view of it where another
 * writer intervenes) and a list as the sink of slot conflicts.
 */
class SlotClaimsTest {

  static final String NODE = NodeResourcesTest.NODE;

  final InMemoryInstanceStore memory = new InMemoryInstanceStore();
  final List<SlotConflict> conflicts = new CopyOnWriteArrayList<>();

  SlotClaims slots(InstanceStore store) {
    return new SlotClaims(
        NODE,
        new InstanceUpdates(store, new Random(1), 20, Duration.ZERO),
        new LocalClaims(NODE),
        conflicts::add);
  }

  @Test
  void aFreeSlotIsClaimedForThisNodeWithoutConflicts() throws Exception {
    memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    SlotClaims slots = slots(memory);

    Instance claimed = slots.claim("cams-1", List.of("cams-1-0"), slot -> nodeUse(NODE));

    assertThat(claimed.deviceUsage().get("cams-1-0")).isEqualTo(nodeUse(NODE));
    assertThat(memory.get("cams-1").orElseThrow().deviceUsage().get("cams-1-0"))
        .isEqualTo(nodeUse(NODE));
    assertThat(slots.claims().held("cams-1")).containsKey("cams-1-0");
    assertThat(
            new NodeResources(
                    new NodeResourcesTest.RecordingAdvertiser(), new LocalDevices(), slots)
                .usageOf("akri.sh/cams-1", "cams-1-0"))
        .isEmpty(); // not discovered here
    assertThat(conflicts).isEmpty();
  }

  @Test
  void aSlotHeldByAnotherNodeIsRefusedAndReportedAsHeldElsewhere() throws Exception {
    Instance created = memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    memory.update(created.withUsage(Map.of("cams-1-0", nodeUse("node-b"))));
    SlotClaims slots = slots(memory);

    assertThatThrownBy(() -> slots.claim("cams-1", List.of("cams-1-0"), s -> nodeUse(NODE)))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.HELD_ELSEWHERE));
    assertThat(conflicts).containsExactly(new SlotConflict.HeldElsewhere("cams-1"));
    assertThat(memory.get("cams-1").orElseThrow().deviceUsage().get("cams-1-0"))
        .isEqualTo(nodeUse("node-b"));
  }

  @Test
  void aClaimThatLostItsWriteToAnotherWriterIsRetriedAndReportsTheLostWrite() throws Exception {
    memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    SlotClaims slots = slots(new OneInterveningWrite(memory));

    Instance claimed = slots.claim("cams-1", List.of("cams-1-1"), slot -> nodeUse(NODE));

    assertThat(claimed.deviceUsage().get("cams-1-1")).isEqualTo(nodeUse(NODE));
    assertThat(conflicts).containsExactly(new SlotConflict.LostWrites("cams-1", 1));
  }

  /**
   * The slot reclaimer frees a slot this node holds while an Allocate asks for it (KubeletRestartIT
   * met this once in 1,500 restarts, and the slot was then lost for good): the Allocate waits for
   * the free to be written and is granted; the slot is never taken for a hand edit.
   */
  @Test
  void aSlotBeingFreedByThisNodeIsGrantedOnceTheFreeIsWritten() throws Exception {
    memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    SlotClaims slots = slots(memory);
    slots.claim("cams-1", List.of("cams-1-0"), slot -> nodeUse(NODE));

    // The reclaimer's first step, before its write of the free slot.
    slots.claims().beginRelease("cams-1", "cams-1-0");
    java.util.concurrent.CompletableFuture<Instance> allocate =
        java.util.concurrent.CompletableFuture.supplyAsync(
            () -> {
              try {
                return slots.claim("cams-1", List.of("cams-1-0"), s -> nodeUse(NODE));
              } catch (AllocationException e) {
                throw new java.util.concurrent.CompletionException(e);
              }
            });
    // The Allocate is waiting, not refused: it cannot finish while the release is under way.
    org.awaitility.Awaitility.await()
        .during(Duration.ofMillis(300))
        .atMost(Duration.ofSeconds(1))
        .until(() -> !allocate.isDone());

    // The reclaimer's write and its end.
    Instance stored = memory.get("cams-1").orElseThrow();
    Map<String, SlotUsage> freed = new java.util.LinkedHashMap<>(stored.deviceUsage());
    freed.put("cams-1-0", SlotUsage.Free.INSTANCE);
    memory.update(stored.withUsage(freed));
    slots.claims().endRelease("cams-1", "cams-1-0", null);

    Instance claimed = allocate.get(5, java.util.concurrent.TimeUnit.SECONDS);
    assertThat(claimed.deviceUsage().get("cams-1-0")).isEqualTo(nodeUse(NODE));
    assertThat(slots.claims().disowned("cams-1", "cams-1-0")).isFalse();
    assertThat(conflicts).isEmpty();
  }

  /** A release that does not end within the wait: the Allocate is refused as being freed. */
  @Test
  void aSlotStillBeingFreedAfterTheWaitIsRefusedAsBeingFreedNotDisowned() throws Exception {
    memory.create(Instance.create("cams-1", "cams", 2, true, NODE, Map.of()));
    SlotClaims slots = slots(memory);
    slots.claim("cams-1", List.of("cams-1-0"), slot -> nodeUse(NODE));
    slots.claims().beginRelease("cams-1", "cams-1-0");

    assertThatThrownBy(() -> slots.claim("cams-1", List.of("cams-1-0"), s -> nodeUse(NODE)))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(AllocationException.Reason.BEING_FREED);
              assertThat(e.getMessage())
                  .isEqualTo(
                      "device cams-1-0 is being freed by node node-a (no container used it for the"
                          + " reclaim grace); ask again");
            });
    assertThat(slots.claims().disowned("cams-1", "cams-1-0")).isFalse();
    assertThat(conflicts).isEmpty();
  }

  @Test
  void aClaimOnAnUnknownInstanceIsRefusedWithoutAConflict() {
    SlotClaims slots = slots(memory);

    assertThatThrownBy(() -> slots.claim("cams-9", List.of("cams-9-0"), s -> nodeUse(NODE)))
        .isInstanceOfSatisfying(
            AllocationException.class,
            e -> assertThat(e.reason()).isEqualTo(AllocationException.Reason.UNKNOWN_DEVICE));
    assertThat(conflicts).isEmpty();
  }

  static SlotUsage nodeUse(String node) {
    return new SlotUsage.NodeUse(node);
  }

  /**
   * The in-memory store, where another writer updates the Instance just before the first update
   * through this view: that update then conflicts, as a lost write does against the API server.
   */
  static final class OneInterveningWrite implements InstanceStore {
    private final InMemoryInstanceStore store;
    private final AtomicBoolean intervened = new AtomicBoolean();

    OneInterveningWrite(InMemoryInstanceStore store) {
      this.store = store;
    }

    @Override
    public Optional<Instance> get(String name) {
      return store.get(name);
    }

    @Override
    public List<Instance> list() {
      return store.list();
    }

    @Override
    public Instance create(Instance instance) throws StoreException {
      return store.create(instance);
    }

    @Override
    public Instance update(Instance instance) throws StoreException {
      if (intervened.compareAndSet(false, true)) {
        store.update(store.get(instance.name()).orElseThrow()); // the other writer's version
      }
      return store.update(instance);
    }

    @Override
    public void delete(Instance instance) throws StoreException {
      store.delete(instance);
    }

    @Override
    public void addListener(Listener listener) {
      store.addListener(listener);
    }
  }
}
