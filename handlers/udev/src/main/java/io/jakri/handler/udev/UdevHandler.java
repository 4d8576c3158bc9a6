package io.jakri.handler.udev;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.io.IOException;
import java.nio.file.Path;
import java.util.Objects;
import java.util.Optional;
import org.pf4j.Extension;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Akri's {@code udev} discovery handler: Akri's udev Configurations, unchanged, matched against the
 * devices in sysfs (and the udev database when there is one). See the module README for the details
 * format, the rule semantics and the device contract.
 *
 * <p>Thread-safe. The only state is the {@link DevWatcher} all of this handler's discoveries share
 * (one watch thread, started with the first discovery and stopped with the last); every {@link
 * #start} returns an independent {@link UdevDiscovery}.
 */
@Extension
public final class UdevHandler implements DiscoveryHandler {

  private static final Logger LOG = LoggerFactory.getLogger(UdevHandler.class);

  /** The handler's name in {@code spec.discoveryHandler.name}. */
  public static final String NAME = "udev";

  private final Path sysRoot;
  private final Path devRoot;
  private final Path udevData;

  private final Object watcherLock = new Object();
  // guarded by watcherLock
  private DevWatcher watcher;
  private boolean watcherFailed;

  /** The handler on this machine: {@code /sys}, {@code /dev}, {@code /run/udev/data}. */
  public UdevHandler() {
    this(Path.of("/sys"), Path.of("/dev"), Path.of("/run/udev/data"));
  }

  /** A handler reading another sysfs, device and udev-database tree (tests). */
  UdevHandler(Path sysRoot, Path devRoot, Path udevData) {
    this.sysRoot = Objects.requireNonNull(sysRoot, "sysRoot");
    this.devRoot = Objects.requireNonNull(devRoot, "devRoot");
    this.udevData = Objects.requireNonNull(udevData, "udevData");
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return UdevDetails.parse(context.discoveryDetails()).validation();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    UdevDetails details = UdevDetails.parse(context.discoveryDetails()).orThrow();
    UdevScanner scanner =
        new UdevScanner(details, sysRoot, Optional.of(udevData), context.discoveryProperties());
    UdevDiscovery discovery =
        new UdevDiscovery(
            context.configurationName(),
            scanner::scan,
            listener,
            context.scheduler(),
            details.rescanInterval(),
            this::subscribe);
    discovery.start();
    return discovery;
  }

  private AutoCloseable subscribe(Runnable onChange) {
    synchronized (watcherLock) {
      if (watcher == null) {
        try {
          watcher = DevWatcher.start(devRoot, udevData);
          watcherFailed = false;
        } catch (IOException | RuntimeException e) {
          if (!watcherFailed) {
            LOG.warn(
                "udev: cannot watch {} for device changes ({}); devices are found by the periodic"
                    + " rescan only",
                devRoot,
                e.toString());
          }
          watcherFailed = true;
          return () -> {};
        }
      }
      DevWatcher current = watcher;
      current.subscribe(onChange);
      return () -> unsubscribe(current, onChange);
    }
  }

  private void unsubscribe(DevWatcher from, Runnable onChange) {
    synchronized (watcherLock) {
      from.unsubscribe(onChange);
      if (from == watcher && from.idle()) {
        watcher = null;
        from.close();
      }
    }
  }
}
