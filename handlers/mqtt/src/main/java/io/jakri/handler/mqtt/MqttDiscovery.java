package io.jakri.handler.mqtt;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import java.io.IOException;
import java.time.Duration;
import java.util.EnumSet;
import java.util.HashSet;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A running mqtt discovery for one Configuration: one {@link Session} at a time feeding one {@link
 * DeviceTable}.
 *
 * <p>Threading: session events arrive on the MQTT library's threads and are serialised by one lock,
 * under which snapshots are reported (in order, never after {@link #close()} returned). Connecting,
 * back-off, the grace period and closing sessions run on the agent's scheduler. Losing the broker
 * keeps the devices for {@code gracePeriod}; after a reconnect, topics not announced again within
 * {@link #SETTLE} are dropped (they were removed while we were away).
 */
final class MqttDiscovery implements Discovery {

  private static final Logger LOG = LoggerFactory.getLogger(MqttDiscovery.class);

  static final Duration FIRST_BACKOFF = Duration.ofSeconds(1);
  static final Duration MAX_BACKOFF = Duration.ofSeconds(60);

  /**
   * How long after a reconnect retained announcements are awaited before stale ones are dropped.
   */
  static final Duration SETTLE = Duration.ofSeconds(5);

  private final String configuration;
  private final MqttDetails details;
  private final DeviceListener listener;
  private final ScheduledExecutorService scheduler;
  private final Session.Factory sessions;
  private final AnnouncementReader reader;

  private final Object lock = new Object();
  // all guarded by lock
  private final DeviceTable table;
  private final Set<Announcement.Reason> warned = EnumSet.noneOf(Announcement.Reason.class);
  private final Set<String> seenSinceConnect = new HashSet<>();
  private Session session;
  private boolean connected;
  private boolean everConnected;
  private int attempts;
  private boolean closed;
  private ScheduledFuture<?> reconnect;
  private ScheduledFuture<?> grace;
  private ScheduledFuture<?> settle;
  private Optional<List<DiscoveredDevice>> lastReported = Optional.empty();

  MqttDiscovery(
      String configuration,
      MqttDetails details,
      DeviceListener listener,
      ScheduledExecutorService scheduler,
      Session.Factory sessions) {
    this.configuration = Objects.requireNonNull(configuration, "configuration");
    this.details = Objects.requireNonNull(details, "details");
    this.listener = Objects.requireNonNull(listener, "listener");
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    this.sessions = Objects.requireNonNull(sessions, "sessions");
    this.reader = new AnnouncementReader(details.mode(), details.maxPayloadBytes());
    this.table = new DeviceTable(details);
  }

  /** Schedules the first connection and returns at once. Call once. */
  void start() {
    scheduler.execute(this::connect);
  }

  private void connect() {
    Session s;
    synchronized (lock) {
      if (closed) {
        return;
      }
      reconnect = null;
      s = sessions.create();
      session = s;
      seenSinceConnect.clear();
    }
    try {
      s.connect(new Events(s));
    } catch (IOException | RuntimeException e) {
      lostOrFailed(s, "cannot connect to " + details.brokers() + ": " + e.getMessage());
    }
  }

  private final class Events implements Session.Events {
    private final Session mine;

    Events(Session mine) {
      this.mine = mine;
    }

    @Override
    public void connected(String broker) {
      synchronized (lock) {
        if (closed || session != mine) {
          return;
        }
        connected = true;
        attempts = 0;
        cancel(grace);
        grace = null;
        LOG.info(
            "mqtt({}): connected to {}, subscribed to {}",
            configuration,
            broker,
            details.mode().subscriptions());
        if (everConnected) {
          cancel(settle);
          settle = schedule(() -> dropStale(mine), SETTLE);
        }
        everConnected = true;
      }
    }

    @Override
    public void failed(Throwable cause) {
      lostOrFailed(mine, "cannot connect to " + details.brokers() + ": " + describe(cause));
    }

    @Override
    public void lost(Throwable cause) {
      lostOrFailed(mine, "lost the broker: " + describe(cause));
    }

    @Override
    public void message(String broker, String topic, byte[] payload) {
      Announcement announcement = reader.read(topic, payload, broker);
      synchronized (lock) {
        if (closed || session != mine) {
          return;
        }
        if (announcement instanceof Announcement.Present present) {
          DeviceTable.Change change = table.put(present);
          if (change == DeviceTable.Change.FULL) {
            warnOnce(Announcement.Reason.TOO_MANY_DEVICES, topic);
            return;
          }
          seenSinceConnect.add(topic);
          if (change == DeviceTable.Change.CHANGED) {
            report();
          }
        } else if (announcement instanceof Announcement.Removed) {
          seenSinceConnect.remove(topic);
          if (table.remove(topic)) {
            report();
          }
        } else if (announcement instanceof Announcement.Rejected rejected) {
          warnOnce(rejected.reason(), topic);
        }
      }
    }
  }

  private void dropStale(Session mine) {
    synchronized (lock) {
      if (closed || session != mine || !connected) {
        return;
      }
      if (table.retainTopics(seenSinceConnect)) {
        report();
      }
    }
  }

  private void lostOrFailed(Session mine, String reason) {
    synchronized (lock) {
      if (closed || session != mine) {
        return;
      }
      session = null;
      connected = false;
      cancel(settle);
      settle = null;
      long delay =
          Math.min(MAX_BACKOFF.toMillis(), FIRST_BACKOFF.toMillis() << Math.min(attempts, 16));
      delay = delay / 2 + ThreadLocalRandom.current().nextLong(delay / 2 + 1);
      attempts++;
      LOG.warn("mqtt({}): {}; trying again in {} ms", configuration, reason, delay);
      if (grace == null && table.size() > 0) {
        LOG.info(
            "mqtt({}): keeping {} devices for {} unless the broker is back",
            configuration,
            table.size(),
            details.gracePeriod());
        grace = schedule(this::graceOver, details.gracePeriod());
      }
      reconnect = schedule(this::connect, Duration.ofMillis(delay));
    }
    closeLater(mine);
  }

  private void graceOver() {
    synchronized (lock) {
      grace = null;
      if (closed || connected) {
        return;
      }
      LOG.warn(
          "mqtt({}): no broker for {}: removing {} devices",
          configuration,
          details.gracePeriod(),
          table.size());
      if (table.clear()) {
        report();
      }
    }
  }

  // Holding lock.
  private void warnOnce(Announcement.Reason reason, String topic) {
    if (warned.add(reason)) {
      LOG.warn(
          "mqtt({}): ignoring a message on {}: {} (further messages ignored for this reason are"
              + " not logged)",
          configuration,
          printable(topic),
          reason.text);
    }
  }

  // Holding lock.
  private void report() {
    List<DiscoveredDevice> snapshot = table.snapshot();
    if (lastReported.isPresent() && lastReported.get().equals(snapshot)) {
      return;
    }
    lastReported = Optional.of(snapshot);
    LOG.debug("mqtt({}): {} devices", configuration, snapshot.size());
    try {
      listener.devices(snapshot);
    } catch (RuntimeException e) {
      LOG.warn("mqtt({}): device listener failed", configuration, e);
    }
  }

  // Holding lock.
  private ScheduledFuture<?> schedule(Runnable task, Duration delay) {
    try {
      return scheduler.schedule(task, delay.toMillis(), TimeUnit.MILLISECONDS);
    } catch (RejectedExecutionException e) {
      return null;
    }
  }

  private static void cancel(ScheduledFuture<?> task) {
    if (task != null) {
      task.cancel(false);
    }
  }

  private void closeLater(Session s) {
    try {
      scheduler.execute(s::close);
    } catch (RejectedExecutionException e) {
      // The agent is shutting its scheduler down: close off the caller's thread anyway.
      Thread closer = new Thread(s::close, "mqtt-close-" + configuration);
      closer.setDaemon(true);
      closer.start();
    }
  }

  @Override
  public void close() {
    Session s;
    synchronized (lock) {
      if (closed) {
        return;
      }
      closed = true;
      cancel(reconnect);
      cancel(grace);
      cancel(settle);
      s = session;
      session = null;
    }
    if (s != null) {
      closeLater(s);
    }
  }

  private static String describe(Throwable cause) {
    if (cause == null) {
      return "no reason given";
    }
    return cause.getMessage() != null ? cause.getMessage() : cause.getClass().getSimpleName();
  }

  /** A broker-supplied text fit for a log line: no control characters, at most 200 chars. */
  static String printable(String text) {
    String clean =
        text.codePoints()
            .map(c -> Character.isISOControl(c) ? '?' : c)
            .collect(StringBuilder::new, StringBuilder::appendCodePoint, StringBuilder::append)
            .toString();
    return clean.length() > 200 ? clean.substring(0, 200) + "..." : clean;
  }
}
