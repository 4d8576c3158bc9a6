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
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * Handlers that misbehave on purpose or inject faults, packaged into plugin jars at test time by
 * {@code PluginJars} (the agent only takes handlers from plugin jars, never from its own classpath;
 * a jar carries this class with all its nested classes, its extension index names the chosen ones).
 */
public final class MisbehavingHandlers {

  private MisbehavingHandlers() {}

  /** A handler's name and a validate() that accepts any details, which most of these share. */
  abstract static class Named implements DiscoveryHandler {
    private final String name;

    Named(String name) {
      this.name = name;
    }

    @Override
    public final String name() {
      return name;
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }
  }

  /** Throws from start(), every time. */
  @org.pf4j.Extension
  public static final class Throwing extends Named {
    public Throwing() {
      super("thrower");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      throw new IllegalStateException("boom from the throwing handler");
    }
  }

  /** Never returns from start(). */
  @org.pf4j.Extension
  public static final class Hanging extends Named {
    public Hanging() {
      super("hanger");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      awaitForever();
      return () -> {};
    }
  }

  /**
   * Reports garbage: null entries, blank and duplicate ids, a device with a huge property map; and
   * one good device {@code good} so the test can see the rest still works.
   */
  @org.pf4j.Extension
  public static final class Garbage extends Named {
    public Garbage() {
      super("garbage");
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
  public static final class FailingOnce extends Named {
    public FailingOnce() {
      super("flaky");
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

  /**
   * Floods: every 100 ms a snapshot of 1,000 devices with ids never seen before (10,000 new devices
   * per second) plus one steady device {@code steady}.
   */
  @org.pf4j.Extension
  public static final class Flooding extends Named {
    public Flooding() {
      super("flood");
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
  public static final class Huge extends Named {
    public Huge() {
      super("huge");
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
  public static final class ValidateThrowing extends Named {
    public ValidateThrowing() {
      super("validate-thrower");
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
  public static final class ValidateHanging extends Named {
    public ValidateHanging() {
      super("validate-hanger");
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
  public static final class CloseThrowing extends Named {
    public CloseThrowing() {
      super("close-thrower");
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
  public static final class Flapping extends Named {
    public Flapping() {
      super("flapping");
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
  public static final class Impostor extends Named {
    public Impostor() {
      super("simulated");
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

  /**
   * Never returns from start(), not even when interrupted, until the file {@code release} appears
   * in the directory named by details {@code dir: <path>}; then it reports device {@code stuck-0}.
   * Each call appends a line to {@code <dir>/starts} first, so a test sees how often it was called.
   */
  @org.pf4j.Extension
  public static final class Stuck extends Named {
    public Stuck() {
      super("stuck");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener)
        throws io.jakri.handler.InvalidDetailsException {
      java.nio.file.Path dir = markStart(context);
      blockUntilReleased(dir);
      listener.devices(List.of(DiscoveredDevice.of("stuck-0", Map.of(), true)));
      return () -> {};
    }
  }

  /**
   * Returns from start() at once, having queued on the scheduler it is given 16 tasks that never
   * return (interrupted or not) until {@code <dir>/release} appears; appends to {@code
   * <dir>/starts} first (details {@code dir: <path>}).
   */
  @org.pf4j.Extension
  public static final class SchedulerHog extends Named {
    public SchedulerHog() {
      super("scheduler-hog");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener)
        throws io.jakri.handler.InvalidDetailsException {
      java.nio.file.Path dir = markStart(context);
      for (int i = 0; i < 16; i++) {
        context.scheduler().execute(() -> blockUntilReleased(dir));
      }
      return () -> {};
    }
  }

  /** Reports device {@code late-0} at once (a plugin dropped into a running agent). */
  @org.pf4j.Extension
  public static final class Late extends Named {
    public Late() {
      super("late");
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      listener.devices(List.of(DiscoveredDevice.of("late-0", Map.of(), true)));
      return () -> {};
    }
  }

  /** Never returns from name() (until interrupted): its plugin cannot be loaded. */
  @org.pf4j.Extension
  public static final class NameHanging implements DiscoveryHandler {
    @Override
    public String name() {
      awaitForever();
      return "name-hanger";
    }

    @Override
    public Validation validate(DiscoveryContext context) {
      return Validation.ok();
    }

    @Override
    public Discovery start(DiscoveryContext context, DeviceListener listener) {
      return () -> {};
    }
  }

  private static java.nio.file.Path markStart(DiscoveryContext context)
      throws io.jakri.handler.InvalidDetailsException {
    Object dir = io.jakri.handler.SafeYaml.loadMap(context.discoveryDetails()).get("dir");
    if (dir == null) {
      throw new io.jakri.handler.InvalidDetailsException("dir: required");
    }
    java.nio.file.Path path = java.nio.file.Path.of(dir.toString());
    try {
      java.nio.file.Files.writeString(
          path.resolve("starts"),
          context.configurationName() + "\n",
          java.nio.file.StandardOpenOption.CREATE,
          java.nio.file.StandardOpenOption.APPEND);
    } catch (java.io.IOException e) {
      throw new java.io.UncheckedIOException(e);
    }
    return path;
  }

  /**
   * Blocks, deaf to interrupts, until {@code <dir>/release} exists (a stuck handler's thread). The
   * interrupt is cleared while waiting (or parkNanos would return at once and the thread spin a
   * core) and set again on the way out.
   */
  private static void blockUntilReleased(java.nio.file.Path dir) {
    java.nio.file.Path release = dir.resolve("release");
    boolean interrupted = false;
    while (!java.nio.file.Files.exists(release)) {
      java.util.concurrent.locks.LockSupport.parkNanos(50_000_000L);
      interrupted |= Thread.interrupted();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
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
