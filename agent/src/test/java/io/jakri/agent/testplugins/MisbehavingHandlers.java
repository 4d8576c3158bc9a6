package io.jakri.agent.testplugins;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.DiscoveredDevice;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.Validation;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;

/**
 * Handlers that misbehave on purpose, packaged into plugin jars at test time (never loaded from the
 * test classpath by the agent: it only takes extensions from plugins).
 */
public final class MisbehavingHandlers {

  private MisbehavingHandlers() {}

  /** Throws from start(), every time. */
  @org.pf4j.Extension
  public static final class Throwing implements DiscoveryHandler {
    @Override
    public String name() {
      return "thrower";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      throw new IllegalStateException("boom from the throwing handler");
    }
  }

  /** Never returns from start(). */
  @org.pf4j.Extension
  public static final class Hanging implements DiscoveryHandler {
    @Override
    public String name() {
      return "hanger";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      try {
        new CountDownLatch(1).await();
      } catch (InterruptedException e) {
        Thread.currentThread().interrupt();
      }
      return () -> {};
    }
  }

  /**
   * Reports garbage: null entries, blank and duplicate ids, a device with a huge property map; and
   * one good device {@code good} so the test can see the rest still works.
   */
  @org.pf4j.Extension
  public static final class Garbage implements DiscoveryHandler {
    @Override
    public String name() {
      return "garbage";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      Map<String, String> huge = new HashMap<>();
      for (int i = 0; i < 100_000; i++) {
        huge.put("P" + i, "v" + i);
      }
      huge.put("LD_PRELOAD", "/evil.so");
      List<DiscoveredDevice> devices = new ArrayList<>();
      devices.add(null);
      devices.add(DiscoveredDevice.of(" ", Map.of(), true));
      devices.add(DiscoveredDevice.of("dup", Map.of("A", "1"), true));
      devices.add(DiscoveredDevice.of("dup", Map.of("A", "2"), true));
      devices.add(DiscoveredDevice.of("huge", huge, true));
      devices.add(DiscoveredDevice.of("good", Map.of("GOOD", "yes"), true));
      context.scheduler().execute(() -> listener.devices(devices));
      return () -> {};
    }
  }

  /** Reports one device, then fails once; restarted with backoff, it works again. */
  @org.pf4j.Extension
  public static final class FailingOnce implements DiscoveryHandler {
    @Override
    public String name() {
      return "flaky";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      context
          .scheduler()
          .execute(
              () -> {
                listener.devices(List.of(DiscoveredDevice.of("flaky-0", Map.of(), true)));
                listener.failed("simulated failure", new RuntimeException("lost connection"));
              });
      return () -> {};
    }
  }
}
