package io.jakri.agent.faults.plugins;

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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Handlers that inject faults, packaged into plugin jars at test time by {@code FaultPluginJars}
 * (the agent only takes handlers from plugin jars, never from its own classpath).
 */
public final class FaultHandlers {

  private FaultHandlers() {}

  /**
   * Floods: every 100 ms a snapshot of 1,000 devices with ids never seen before (10,000 new devices
   * per second) plus one steady device {@code steady}.
   */
  @org.pf4j.Extension
  public static final class Flooding implements DiscoveryHandler {
    @Override
    public String name() {
      return "flood";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      long[] generation = {0};
      ScheduledFuture<?> task =
          context
              .scheduler()
              .scheduleAtFixedRate(
                  () -> {
                    long g = generation[0]++;
                    List<DiscoveredDevice> devices = new ArrayList<>(1001);
                    devices.add(DiscoveredDevice.of("steady", Map.of("S", "1"), true));
                    for (int i = 0; i < 1000; i++) {
                      devices.add(DiscoveredDevice.of("f-" + g + "-" + i, Map.of(), true));
                    }
                    listener.devices(devices);
                  },
                  0,
                  100,
                  TimeUnit.MILLISECONDS);
      return () -> task.cancel(false);
    }
  }

  /**
   * Reports 30,000 devices in one snapshot (over the agent's cap) and one device {@code wide} with
   * a million properties, one of them {@code LD_PRELOAD}.
   */
  @org.pf4j.Extension
  public static final class Huge implements DiscoveryHandler {
    @Override
    public String name() {
      return "huge";
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
                Map<String, String> wide = new HashMap<>();
                for (int i = 0; i < 1_000_000; i++) {
                  wide.put("P" + i, "v");
                }
                wide.put("LD_PRELOAD", "/evil.so");
                List<DiscoveredDevice> devices = new ArrayList<>();
                devices.add(DiscoveredDevice.of("wide", wide, true));
                for (int i = 0; i < 30_000; i++) {
                  devices.add(DiscoveredDevice.of("h-" + i, Map.of(), true));
                }
                listener.devices(devices);
              });
      return () -> {};
    }
  }

  /** Throws from validate(). */
  @org.pf4j.Extension
  public static final class ValidateThrowing implements DiscoveryHandler {
    @Override
    public String name() {
      return "validate-thrower";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      throw new IllegalStateException("validate exploded");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      return () -> {};
    }
  }

  /** Never returns from validate(). */
  @org.pf4j.Extension
  public static final class ValidateHanging implements DiscoveryHandler {
    @Override
    public String name() {
      return "validate-hanger";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      awaitForever();
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      return () -> {};
    }
  }

  /** Reports a device, then throws on the handler's own callback thread and from close(). */
  @org.pf4j.Extension
  public static final class CloseThrowing implements DiscoveryHandler {
    @Override
    public String name() {
      return "close-thrower";
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
                listener.devices(List.of(DiscoveredDevice.of("ct-0", Map.of(), true)));
                throw new IllegalStateException("callback exploded");
              });
      return () -> {
        throw new IllegalStateException("close exploded");
      };
    }
  }

  /**
   * Flaps: device {@code flap} appears and vanishes every 100 ms for {@code ticks} reports (details
   * {@code ticks: N}, {@code end: present|absent}), then stays as {@code end} says; device {@code
   * still} is always there.
   */
  @org.pf4j.Extension
  public static final class Flapping implements DiscoveryHandler {
    @Override
    public String name() {
      return "flapping";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener)
        throws io.jakri.handler.InvalidDetailsException {
      Map<String, Object> details = io.jakri.handler.SafeYaml.loadMap(context.discoveryDetails());
      long ticks = ((Number) details.getOrDefault("ticks", 50)).longValue();
      boolean endPresent = !"absent".equals(details.get("end"));
      long[] tick = {0};
      DiscoveredDevice still = DiscoveredDevice.of("still", Map.of("K", "v"), true);
      DiscoveredDevice flap = DiscoveredDevice.of("flap", Map.of("K", "v"), true);
      ScheduledFuture<?> task =
          context
              .scheduler()
              .scheduleAtFixedRate(
                  () -> {
                    long t = tick[0]++;
                    boolean present = t < ticks ? t % 2 == 0 : endPresent;
                    listener.devices(present ? List.of(still, flap) : List.of(still));
                  },
                  0,
                  100,
                  TimeUnit.MILLISECONDS);
      return () -> task.cancel(false);
    }
  }

  /**
   * Claims the name of the packaged {@code simulated} handler and reports device {@code impostor}.
   */
  @org.pf4j.Extension
  public static final class Impostor implements DiscoveryHandler {
    @Override
    public String name() {
      return "simulated";
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
              () -> listener.devices(List.of(DiscoveredDevice.of("impostor", Map.of(), true))));
      return () -> {};
    }
  }

  private static void awaitForever() {
    try {
      new CountDownLatch(1).await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }
}
