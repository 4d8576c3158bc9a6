package io.jakri.handler.mqtt;

import static org.awaitility.Awaitility.await;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/** Sessions that do nothing on their own: the test plays the broker through their events. */
final class FakeSessions implements Session.Factory {

  /** One fake session; {@link #events()} is set once the discovery called connect. */
  static final class Fake implements Session {
    private volatile Events events;
    private volatile boolean closed;

    @Override
    public void connect(Events events) {
      this.events = events;
    }

    Events events() {
      return events;
    }

    boolean closed() {
      return closed;
    }

    @Override
    public void close() {
      closed = true;
    }
  }

  final List<Fake> created = new CopyOnWriteArrayList<>();

  @Override
  public Session create() {
    Fake f = new Fake();
    created.add(f);
    return f;
  }

  /** Session number {@code count} (from 1) once the discovery has called its connect. */
  Fake awaitConnect(int count) {
    await()
        .atMost(Duration.ofSeconds(10))
        .until(() -> created.size() >= count && created.get(count - 1).events() != null);
    return created.get(count - 1);
  }
}
