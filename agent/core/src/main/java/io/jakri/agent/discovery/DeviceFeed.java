package io.jakri.agent.discovery;

import io.jakri.agent.instance.StoreException;
import io.jakri.agent.model.LocalDevice;
import java.time.Duration;
import java.time.Instant;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.function.LongSupplier;
import java.util.function.Supplier;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Hands what the device tables of {@link DiscoveryManager} return to its {@link DeviceSink}, one
 * change at a time: devices to be written wait for their Configuration's turn ({@link
 * #publishTurn}), vanished devices go at once and a timer ends their offline grace, and a device
 * whose Instance cannot be written is dropped from its table and its Configuration's last snapshot
 * processed again after a backoff. Logs the devices discovered, back and vanished. Confined to the
 * discovery thread; its timers hand their work to it.
 */
final class DeviceFeed {

  // Logged as the discovery's own lines (operators grep for them, docs name the logger).
  private static final Logger LOG = LoggerFactory.getLogger(DiscoveryManager.class);

  /** Devices logged one by one per snapshot (discovered or vanished); the rest are counted. */
  private static final int LOGGED_PER_SNAPSHOT = 20;

  /**
   * Devices written to the store in one turn of a Configuration before the next Configuration with
   * devices waiting gets its turn (see {@link #publishTurn}).
   */
  static final int PUBLISH_BATCH = 8;

  private static final Duration MIN_RETRY = Duration.ofSeconds(1);
  private static final Duration MAX_RETRY = Duration.ofMinutes(1);

  private final DeviceSink sink;
  private final Executor loop;
  private final ScheduledExecutorService scheduler;
  private final LongSupplier nanoTime;
  private final Duration offlineGrace;
  // Configurations with devices waiting to be written to the store, in turn order, and whether a
  // turn is queued on the discovery thread.
  private final LinkedHashSet<Lane> publishing = new LinkedHashSet<>();
  private boolean publishTurnQueued;
  private final java.util.function.BooleanSupplier closed;

  /**
   * @param loop the discovery thread
   * @param nanoTime the clock of report times and of the offline grace
   * @param closed whether the discovery is closing (then nothing waiting is handed on)
   */
  DeviceFeed(
      DeviceSink sink,
      Executor loop,
      ScheduledExecutorService scheduler,
      LongSupplier nanoTime,
      Duration offlineGrace,
      java.util.function.BooleanSupplier closed) {
    this.closed = closed;
    this.sink = sink;
    this.loop = loop;
    this.scheduler = scheduler;
    this.nanoTime = nanoTime;
    this.offlineGrace = offlineGrace;
  }

  /** One Configuration's table and what waits for it here. */
  final class Lane {
    final DeviceTable table;
    // Called on the discovery thread when a write failed; returns what the retry timer runs.
    private final Supplier<Runnable> retry;
    // Devices waiting for this Configuration's turn to be written to the store (by name).
    private final Map<String, Queued> toPublish = new LinkedHashMap<>();
    private ScheduledFuture<?> graceTimer;
    private Instant graceAt;
    private int publishFailures;
    private ScheduledFuture<?> republish;
    private boolean open = true;

    private Lane(DeviceTable table, Supplier<Runnable> retry) {
      this.table = table;
      this.retry = retry;
    }

    /** Cancels the grace and retry timers (the discovery starts afresh, or stops). */
    void cancelTimers() {
      if (republish != null) {
        republish.cancel(false);
        republish = null;
      }
      if (graceTimer != null) {
        graceTimer.cancel(false);
        graceTimer = null;
        graceAt = null;
      }
    }

    /** Stops for good: timers cancelled, devices still waiting to be written are not. */
    void close() {
      open = false;
      cancelTimers();
    }

    private String configuration() {
      return table.spec().name();
    }
  }

  /**
   * A lane for {@code table}.
   *
   * @param retry called (on the discovery thread) when a device's Instance could not be written;
   *     returns what to run after the backoff to process the Configuration's last snapshot again
   */
  Lane lane(DeviceTable table, Supplier<Runnable> retry) {
    return new Lane(table, retry);
  }

  /** Now, on the timeline of {@code nanoTime} (monotonic: the tables' time never goes back). */
  Instant now() {
    return Instant.EPOCH.plusNanos(nanoTime.getAsLong());
  }

  /** What a snapshot changed: logged, devices to write queued, vanished devices handed on. */
  void snapshot(Lane lane, List<DeviceChange> changes, long reportedNanos) {
    int discovered = 0;
    List<DeviceChange> vanished = new java.util.ArrayList<>();
    for (DeviceChange change : changes) {
      if (change instanceof DeviceChange.Vanished) {
        vanished.add(change);
        continue;
      }
      if (change instanceof DeviceChange.Appeared a && ++discovered <= LOGGED_PER_SNAPSHOT) {
        LOG.info(
            "configuration {}: device {} discovered as instance {}",
            lane.configuration(),
            a.device().device().id(),
            a.instanceName());
      } else if (change instanceof DeviceChange.Returned) {
        LOG.info("instance {}: device is back", change.instanceName());
      }
      queuePublish(lane, change, reportedNanos);
    }
    if (discovered > LOGGED_PER_SNAPSHOT) {
      LOG.info(
          "configuration {}: {} more devices discovered (not logged one by one)",
          lane.configuration(),
          discovered - LOGGED_PER_SNAPSHOT);
    }
    vanished(lane, vanished, reportedNanos);
  }

  /** Hands on devices that vanished (offline now, removed after the grace) and times the grace. */
  void vanished(Lane lane, List<DeviceChange> changes, long reportedNanos) {
    int logged = 0;
    for (DeviceChange change : changes) {
      emit(lane, change, reportedNanos);
      if (change instanceof DeviceChange.Vanished v && ++logged <= LOGGED_PER_SNAPSHOT) {
        LOG.info(
            "instance {}: device {} vanished; unhealthy now, removed after {}",
            v.instanceName(),
            v.device().device().id(),
            io.jakri.logging.DurationText.of(offlineGrace));
      }
    }
    if (changes.size() > LOGGED_PER_SNAPSHOT) {
      LOG.info(
          "configuration {}: {} more devices vanished (not logged one by one)",
          lane.configuration(),
          changes.size() - LOGGED_PER_SNAPSHOT);
    }
    armGrace(lane);
  }

  /** Hands on {@code changes} now, in order. */
  void now(Lane lane, List<DeviceChange> changes, long reportedNanos) {
    for (DeviceChange change : changes) {
      emit(lane, change, reportedNanos);
    }
  }

  /** This node leaves an Instance no table has. */
  void release(String instanceName) {
    emit(null, new DeviceChange.Released(instanceName), nanoTime.getAsLong());
  }

  /** Times the end of the earliest offline grace of the lane's table, unless timed already. */
  private void armGrace(Lane lane) {
    Optional<Instant> next = lane.table.nextExpiry();
    if (next.isEmpty() || (lane.graceAt != null && !next.get().isBefore(lane.graceAt))) {
      return;
    }
    if (lane.graceTimer != null) {
      lane.graceTimer.cancel(false);
    }
    lane.graceAt = next.get();
    long delay = Math.max(0, Duration.between(now(), next.get()).toNanos());
    lane.graceTimer =
        scheduler.schedule(() -> loop.execute(() -> graceEnded(lane)), delay, TimeUnit.NANOSECONDS);
  }

  private void graceEnded(Lane lane) {
    lane.graceAt = null;
    lane.graceTimer = null;
    if (lane.open) {
      now(lane, lane.table.expire(now()), nanoTime.getAsLong());
      armGrace(lane);
    }
  }

  /**
   * Queues a change to be written to the store (and advertised) in the lane's next turn; a device
   * already waiting keeps its place and its first change.
   */
  private void queuePublish(Lane lane, DeviceChange change, long reportedNanos) {
    lane.toPublish.putIfAbsent(change.instanceName(), new Queued(change.kind(), reportedNanos));
    publishing.add(lane);
    queueTurn();
  }

  private void queueTurn() {
    if (!publishTurnQueued && !closed.getAsBoolean()) {
      try {
        loop.execute(this::publishTurn);
        publishTurnQueued = true;
      } catch (RejectedExecutionException e) {
        // closing
      }
    }
  }

  /**
   * One turn of the fair publishing queue: writes up to {@link #PUBLISH_BATCH} waiting devices of
   * the Configuration whose turn it is (each an Instance write, an API request in cluster mode),
   * then puts that Configuration at the back and queues the next turn behind whatever else waits
   * for the discovery thread. So Configurations with devices waiting take turns round-robin, and a
   * Configuration added while another one's 10,000 devices are being written waits for at most one
   * batch of each other Configuration, not for all of them. A device is written in the state it has
   * when its turn comes (skipped if it left meanwhile).
   */
  private void publishTurn() {
    publishTurnQueued = false;
    Iterator<Lane> turns = publishing.iterator();
    if (!turns.hasNext() || closed.getAsBoolean()) {
      return;
    }
    Lane lane = turns.next();
    turns.remove();
    if (!lane.open) {
      lane.toPublish.clear();
    } else {
      int written = 0;
      Iterator<Map.Entry<String, Queued>> waiting = lane.toPublish.entrySet().iterator();
      while (waiting.hasNext() && written < PUBLISH_BATCH && !closed.getAsBoolean()) {
        Map.Entry<String, Queued> next = waiting.next();
        waiting.remove();
        Optional<LocalDevice> device = lane.table.get(next.getKey());
        if (device.isPresent()) {
          emit(lane, next.getValue().change(device.get()), next.getValue().reportedNanos());
          written++;
        }
      }
      if (!lane.toPublish.isEmpty()) {
        publishing.add(lane); // to the back: the next Configuration goes first
      }
    }
    if (!publishing.isEmpty()) {
      queueTurn();
    }
  }

  /**
   * Hands one change to the sink. When a device's Instance cannot be written, the device is dropped
   * from its table and the last snapshot processed again after a backoff.
   */
  private void emit(Lane lane, DeviceChange change, long reportedNanos) {
    try {
      sink.accept(change, reportedNanos);
    } catch (StoreException e) {
      if (!change.kind().writesInstance()) {
        LOG.error(
            "instance {}: cannot remove this node from it: {}",
            change.instanceName(),
            e.getMessage());
        return;
      }
      lane.table.forget(change.instanceName());
      long delay = retryLater(lane);
      LOG.error(
          "instance {}: cannot record it in the store ({}); retrying in {} ms",
          change.instanceName(),
          e.getMessage(),
          delay);
      return;
    }
    if (change.kind().writesInstance()) {
      lane.publishFailures = 0;
    }
  }

  /**
   * Processes the last snapshot again after a backoff (1 s doubling to 1 min), so devices whose
   * Instance could not be written are retried even if the handler reports nothing new.
   */
  private long retryLater(Lane lane) {
    long delay =
        Math.min(MAX_RETRY.toMillis(), MIN_RETRY.toMillis() << Math.min(lane.publishFailures, 6));
    lane.publishFailures++;
    if (lane.republish == null || lane.republish.isDone()) {
      lane.republish = scheduler.schedule(lane.retry.get(), delay, TimeUnit.MILLISECONDS);
    }
    return delay;
  }

  /** A device waiting for its turn to be written, with its first change since it last was. */
  private record Queued(DeviceChange.Kind kind, long reportedNanos) {
    DeviceChange change(LocalDevice device) {
      return switch (kind) {
        case APPEARED -> new DeviceChange.Appeared(device);
        case RETURNED -> new DeviceChange.Returned(device);
        default -> new DeviceChange.Updated(device);
      };
    }
  }
}
