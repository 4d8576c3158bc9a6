package io.jakri.handler.staticmapping;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.FixedSnapshotDiscovery;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import org.pf4j.Extension;

/**
 * Devices listed per host in a Spookd-compatible {@code deviceMapping}: each node sees the devices
 * whose host lists name it. Devices are shared (one Instance across all their hosts) and belong to
 * the class named by their {@code resourceName}. See the module README for the details format.
 *
 * <p>Stateless and thread-safe; each {@link #start} returns an independent {@link Discovery} that
 * reports its single snapshot on the context's scheduler. A changed mapping arrives as a changed
 * Configuration, which the agent handles by closing and starting discovery again.
 */
@Extension
public final class StaticHandler implements DiscoveryHandler {

  /** The handler's name in {@code spec.discoveryHandler.name}. */
  public static final String NAME = "static";

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return DeviceMapping.parse(context.discoveryDetails()).validation();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    DeviceMapping mapping = DeviceMapping.parse(context.discoveryDetails()).orThrow();
    String nodeName = context.nodeName();
    return FixedSnapshotDiscovery.start(
        context.scheduler(), () -> mapping.devicesFor(nodeName), listener);
  }
}
