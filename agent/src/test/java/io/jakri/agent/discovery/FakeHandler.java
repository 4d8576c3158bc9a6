package io.jakri.agent.discovery;

import static org.awaitility.Awaitility.await;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A handler named {@code fake} whose discoveries report what the test tells them: it keeps each
 * start's listener and counts starts and closes.
 */
final class FakeHandler implements DiscoveryHandler {
  static final Duration WAIT = Duration.ofSeconds(10);

  final List<DeviceListener> listeners = new CopyOnWriteArrayList<>();
  final AtomicInteger started = new AtomicInteger();
  final AtomicInteger closed = new AtomicInteger();

  @Override
  public String name() {
    return "fake";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return Validation.ok();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener) {
    listeners.add(listener);
    started.incrementAndGet();
    return closed::incrementAndGet;
  }

  /** The listener of the {@code n}th start, once it happened. */
  DeviceListener awaitStarted(int n) {
    await().atMost(WAIT).until(() -> listeners.size() >= n);
    return listeners.get(n - 1);
  }
}
