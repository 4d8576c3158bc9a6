package io.jakri.agent.reclaim;

import io.jakri.agent.allocation.LocalClaims;
import io.jakri.agent.instance.Instance;
import io.jakri.agent.instance.InstanceStore;
import io.jakri.agent.instance.InstanceUpdates;
import io.jakri.agent.instance.StoreException;
import io.jakri.crd.SlotUsage;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Frees slots that this node holds but no container uses any more (DESIGN §3: "Slots that no
 * running container uses any more (per the kubelet's PodResources API) are freed after a grace
 * period"). The kubelet never tells a device plugin that a pod ended, so without this a slot
 * claimed in Allocate would stay taken forever.
 *
 * <p>Each round: ask PodResources which devices are in use, then look at every slot of every stored
 * Instance held by this node ({@link SlotUsage.NodeUse} or {@link SlotUsage.ClassUse} of this node)
 * that this node's own record ({@link LocalClaims}) holds the same way. A slot the Instance names
 * for this node that this node never claimed (a hand edit or a forged holder) is never freed here:
 * this node's free would carry its release entry and let every node take a slot that another node's
 * pod may use (slot rule 4 in docs/operations.md). A held slot is <em>in use</em> when its id (or,
 * for a class claim, its class device id) appears in PodResources under any resource: under {@code
 * akri.sh/<instance>} for a node claim, under a class resource for a class claim, and, to stay on
 * the safe side when the two disagree, under the other kind too. A held slot not in use becomes a
 * <em>candidate</em>; a candidate that is still held the same way and still unused in a round at
 * least {@code grace} after it was first seen is freed. So a slot is freed only when it was held
 * continuously, the same way, and seen unused in successful PodResources answers spanning at least
 * the grace period. The grace also covers the window in which Allocate has claimed a slot but the
 * kubelet does not list the container yet.
 *
 * <p>A candidate is dropped (its timer reset) when its slot is seen in use, seen held differently
 * or not at all, or when the store reports any change of that slot's usage (this catches "freed and
 * claimed again" between two rounds). A failed PodResources call frees nothing and drops all
 * candidates: continuous non-use cannot be vouched for across a blind spot. It is logged once per
 * outage at WARN, and its end at INFO.
 *
 * <p>Each round also tells this node's {@link LocalClaims} about every slot a container uses (a
 * device reported under one of this node's Instance or class resources), so the node's record of
 * its claims survives an Instance that lost them; a slot is forgotten there when this reclaimer
 * frees it, or when no container uses it and the Instance shows it held by another node, lists no
 * such slot, or no longer lists this node.
 *
 * <p>Limitation inherited from the kubelet: its v1 List reports app containers (and restartable
 * init containers), not classic init containers, so a slot used only by an init container that runs
 * longer than the grace period could be freed early.
 *
 * <p>Threading: rounds run on the given scheduler, one at a time; {@link #runOnce()} may also be
 * called directly (tests) but not concurrently with itself. Store listener callbacks may come from
 * any thread. The mutation given to {@link InstanceUpdates} consults the candidate map to refuse a
 * free whose candidate was reset meanwhile.
 */
public final class SlotReclaimer implements InstanceStore.Listener, AutoCloseable {

  private static final Logger LOG = LoggerFactory.getLogger(SlotReclaimer.class);

  /** How long a held slot must be seen unused before it is freed. */
  public static final Duration DEFAULT_GRACE = Duration.ofSeconds(20);

  /** The longest time between two rounds. */
  public static final Duration MAX_PERIOD = Duration.ofSeconds(5);

  private static final Duration MIN_PERIOD = Duration.ofMillis(50);

  private final String node;
  private final PodResourcesClient podResources;
  private final InstanceUpdates updates;
  private final ScheduledExecutorService scheduler;
  private final Clock clock;
  private final Duration grace;
  private final Duration period;
  private final LocalClaims claims;
  private final BiFunction<String, String, Optional<SlotUsage>> usageOf;
  private final Map<SlotKey, Candidate> candidates = new ConcurrentHashMap<>();
  private final AtomicLong reclaimed = new AtomicLong();

  // Only touched by the round (one at a time) and start/close (synchronized).
  private boolean listFailing;

  /** The last failure logged, so that a standing failure is logged once until it changes. */
  private String lastFailure = "";

  private ScheduledFuture<?> periodic;
  private volatile boolean closed;

  /**
   * @param node this node's name; only its slots are ever freed
   * @param podResources the kubelet's PodResources API (not closed by this class)
   * @param updates writes to the Instance store; its store is also watched for slot changes
   * @param scheduler runs the rounds (shared; not shut down by this class)
   * @param grace how long a held slot must be seen unused before it is freed
   * @param period time between the end of one round and the start of the next
   * @param claims this node's record of the slots it holds (told what PodResources reports in use
   *     and what this reclaimer frees); only slots it holds are ever freed
   * @param usageOf the slot usage a device in use stands for (resource name, device id), empty for
   *     devices that are not slots of this node's resources
   */
  public SlotReclaimer(
      String node,
      PodResourcesClient podResources,
      InstanceUpdates updates,
      ScheduledExecutorService scheduler,
      Clock clock,
      Duration grace,
      Duration period,
      LocalClaims claims,
      BiFunction<String, String, Optional<SlotUsage>> usageOf) {
    this.claims = Objects.requireNonNull(claims, "claims");
    this.usageOf = Objects.requireNonNull(usageOf, "usageOf");
    this.node = Objects.requireNonNull(node, "node");
    this.podResources = Objects.requireNonNull(podResources, "podResources");
    this.updates = Objects.requireNonNull(updates, "updates");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.clock = Objects.requireNonNull(clock, "clock");
    if (grace.isNegative() || period.isZero() || period.isNegative()) {
      throw new IllegalArgumentException(
          "grace must not be negative and period must be positive: " + grace + ", " + period);
    }
    this.grace = grace;
    this.period = period;
  }

  /**
   * A round period fitting {@code grace}: a quarter of it, between 50 ms and {@link #MAX_PERIOD} (5
   * s for the default 20 s grace), so a slot is freed at most about a period after its grace ends.
   */
  public static Duration periodFor(Duration grace) {
    Duration quarter = grace.dividedBy(4);
    if (quarter.compareTo(MIN_PERIOD) < 0) {
      return MIN_PERIOD;
    }
    return quarter.compareTo(MAX_PERIOD) > 0 ? MAX_PERIOD : quarter;
  }

  /** Watches the store and schedules the rounds. Idempotent; no-op after {@link #close()}. */
  public synchronized void start() {
    if (periodic != null || closed) {
      return;
    }
    updates.store().addListener(this);
    periodic =
        scheduler.scheduleWithFixedDelay(
            this::runSafely, period.toMillis(), period.toMillis(), TimeUnit.MILLISECONDS);
    LOG.info(
        "slot reclaimer on node {}: freeing slots unused for {} (checked every {})",
        node,
        io.jakri.logging.DurationText.of(grace),
        io.jakri.logging.DurationText.of(period));
  }

  /** How many slots this reclaimer has freed. */
  public long reclaimed() {
    return reclaimed.get();
  }

  /** The grace period. */
  public Duration grace() {
    return grace;
  }

  private void runSafely() {
    try {
      runOnce();
    } catch (RuntimeException e) {
      // Never let an exception end the periodic task.
      LOG.warn("slot reclaimer round failed", e);
    }
  }

  /** One round, as described in the class comment. Returns how many slots it freed. */
  public int runOnce() {
    if (closed) {
      return 0;
    }
    Instant listedAt = clock.instant();
    Set<DeviceInUse> inUse;
    try {
      inUse = podResources.devicesInUse();
    } catch (PodResourcesException e) {
      candidates.clear();
      String failure = String.valueOf(e.getMessage());
      if ((!listFailing || !failure.equals(lastFailure)) && !closed) {
        listFailing = true;
        lastFailure = failure;
        LOG.warn(
            "cannot ask the kubelet which devices are in use; freeing no slots until it answers:"
                + " {}",
            e.getMessage());
      }
      return 0;
    }
    if (listFailing) {
      listFailing = false;
      lastFailure = "";
      LOG.info("the kubelet's PodResources API answers again; slot reclamation resumes");
    }
    List<Instance> instances;
    try {
      instances = updates.store().list();
    } catch (StoreException e) {
      LOG.warn("slot reclaimer: cannot list instances: {}", e.getMessage());
      return 0;
    }
    // Taken after both reads: a claim seen held here happened before this instant, so the grace
    // counts from no earlier than the claim.
    Instant observedAt = clock.instant();
    // Slot ids are unique across resources, so an id in use under any resource is in use.
    Set<String> idsInUse = new HashSet<>();
    for (DeviceInUse d : inUse) {
      idsInUse.add(d.deviceId());
      usageOf
          .apply(d.resourceName(), d.deviceId())
          .ifPresent(u -> claims.hold(instanceOf(d.deviceId()), d.deviceId(), u));
    }
    forgetUnusedClaimsHeldElsewhere(instances, idsInUse);
    Set<SlotKey> held = new HashSet<>();
    Map<SlotKey, Candidate> due = new LinkedHashMap<>();
    for (Instance instance : instances) {
      Map<String, SlotUsage> recorded = null;
      for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
        SlotUsage usage = slot.getValue();
        if (!usage.heldBy(node)) {
          continue;
        }
        if (recorded == null) {
          recorded = claims.held(instance.name());
        }
        if (!usage.equals(recorded.get(slot.getKey()))) {
          // Not this node's claim (named for it by someone else, slot rule 4): freeing it with
          // this node's release entry would let every node take a slot another node may use.
          continue;
        }
        SlotKey key = new SlotKey(instance.name(), slot.getKey());
        held.add(key);
        if (inUse(slot.getKey(), usage, idsInUse)) {
          candidates.remove(key);
          continue;
        }
        Candidate candidate =
            candidates.compute(
                key,
                (k, old) ->
                    old != null && old.usage().equals(usage)
                        ? old
                        : new Candidate(usage, observedAt));
        if (Duration.between(candidate.since(), listedAt).compareTo(grace) >= 0) {
          due.put(key, candidate);
        }
      }
    }
    candidates.keySet().retainAll(held);
    int freed = 0;
    for (Map.Entry<SlotKey, Candidate> e : due.entrySet()) {
      if (free(e.getKey(), e.getValue(), listedAt)) {
        freed++;
      }
    }
    return freed;
  }

  /**
   * Forgets local claims no container uses whose Instance shows the slot held by another node, has
   * no such slot, or does not list this node: nothing here to protect, and nothing to write back.
   */
  private void forgetUnusedClaimsHeldElsewhere(List<Instance> instances, Set<String> idsInUse) {
    List<String> mine = claims.instances();
    if (mine.isEmpty()) {
      return;
    }
    Map<String, Instance> byName = new java.util.HashMap<>();
    for (Instance i : instances) {
      byName.put(i.name(), i);
    }
    for (String name : mine) {
      Instance instance = byName.get(name);
      if (instance == null) {
        continue; // deleted: its claims are written into it again when it comes back
      }
      claims
          .held(name)
          .forEach(
              (slot, usage) -> {
                if (inUse(slot, usage, idsInUse)) {
                  return;
                }
                SlotUsage stored = instance.deviceUsage().get(slot);
                if (stored == null
                    || !instance.nodes().contains(node)
                    || !(stored instanceof SlotUsage.Free) && !stored.heldBy(node)) {
                  claims.release(name, slot);
                }
              });
    }
  }

  /** The Instance a slot id belongs to: the id without its {@code -<n>} suffix. */
  private static String instanceOf(String slot) {
    int dash = slot.lastIndexOf('-');
    return dash < 0 ? slot : slot.substring(0, dash);
  }

  /**
   * Whether a container holds the slot (see the class comment for why any resource counts). A slot
   * held for a ResourceClaim counts as used: the kubelet frees it by unpreparing the claim.
   */
  private static boolean inUse(String slotId, SlotUsage usage, Set<String> idsInUse) {
    return usage instanceof SlotUsage.ClaimUse
        || idsInUse.contains(slotId)
        || usage instanceof SlotUsage.ClassUse c && idsInUse.contains(c.vdev());
  }

  private boolean free(SlotKey key, Candidate candidate, Instant listedAt) {
    boolean[] freedIt = {false};
    claims.beginRelease(key.instance(), key.slot());
    try {
      updates.apply(
          key.instance(),
          current -> {
            freedIt[0] = false;
            if (current.isEmpty()
                || closed
                || candidates.get(key) != candidate
                || !candidate.usage().equals(current.get().deviceUsage().get(key.slot()))) {
              // Gone, or claimed anew or differently since it was seen unused: not ours to free.
              return current;
            }
            Map<String, SlotUsage> usage = new LinkedHashMap<>(current.get().deviceUsage());
            usage.put(key.slot(), SlotUsage.Free.INSTANCE);
            freedIt[0] = true;
            return Optional.of(current.get().withUsage(usage));
          });
    } catch (StoreException e) {
      LOG.warn(
          "instance {}: could not free unused slot {} of node {}: {}",
          key.instance(),
          key.slot(),
          node,
          e.getMessage());
      freedIt[0] = false;
      return false;
    } finally {
      // Not freed after all: the slot stays in this node's record if the store still shows it.
      claims.endRelease(
          key.instance(),
          key.slot(),
          freedIt[0]
              ? null
              : storedOrEmpty(key.instance())
                  .map(i -> i.deviceUsage().get(key.slot()))
                  .orElse(null));
    }
    candidates.remove(key, candidate);
    if (freedIt[0]) {
      reclaimed.incrementAndGet();
      LOG.info(
          "instance {}: freed slot {} held by node {} ({}): no container has used it for {}",
          key.instance(),
          key.slot(),
          node,
          candidate.usage() instanceof SlotUsage.ClassUse ? "class resource" : "instance resource",
          Duration.between(candidate.since(), listedAt));
    }
    return freedIt[0];
  }

  private Optional<Instance> storedOrEmpty(String name) {
    try {
      return updates.store().get(name);
    } catch (StoreException e) {
      return Optional.empty();
    }
  }

  /** Resets the timer of every candidate whose slot changed (e.g. freed and claimed again). */
  @Override
  public void changed(Instance instance) {
    for (Map.Entry<String, SlotUsage> slot : instance.deviceUsage().entrySet()) {
      SlotKey key = new SlotKey(instance.name(), slot.getKey());
      Candidate candidate = candidates.get(key);
      if (candidate != null && !candidate.usage().equals(slot.getValue())) {
        candidates.remove(key, candidate);
      }
    }
  }

  @Override
  public void deleted(String name) {
    candidates.keySet().removeIf(k -> k.instance().equals(name));
  }

  /**
   * Stops scheduling rounds; a round in progress frees nothing more. Idempotent. The store listener
   * stays registered but is inert in effect (it only drops candidates).
   */
  @Override
  public synchronized void close() {
    closed = true;
    if (periodic != null) {
      periodic.cancel(false);
    }
    candidates.clear();
  }

  private record SlotKey(String instance, String slot) {}

  /**
   * A held slot seen unused since {@code since}. Compared by identity: a reset replaces it by a new
   * object even when the values are equal.
   */
  private static final class Candidate {
    private final SlotUsage usage;
    private final Instant since;

    Candidate(SlotUsage usage, Instant since) {
      this.usage = usage;
      this.since = since;
    }

    SlotUsage usage() {
      return usage;
    }

    Instant since() {
      return since;
    }
  }
}
