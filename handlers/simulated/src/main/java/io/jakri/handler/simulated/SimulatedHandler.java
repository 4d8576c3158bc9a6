package io.jakri.handler.simulated;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.FixedSnapshotDiscovery;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.util.Set;
import org.pf4j.Extension;

/**
 * Simulated devices: {@code count} devices per node in the manner of the simple device plugin, or
 * one device per entry of {@code descriptions} in the manner of Akri's debugEcho handler (hence the
 * alias {@code debugEcho}). See the module README for the details format.
 *
 * <p>Stateless and thread-safe; each {@link #start} returns an independent {@link Discovery} that
 * reports its single snapshot on the context's scheduler (in debugEcho mode, again whenever Akri's
 * availability file turns the devices offline or back online).
 */
@Extension
public final class SimulatedHandler implements DiscoveryHandler {

  /** The handler's name in {@code spec.discoveryHandler.name}. */
  public static final String NAME = "simulated";

  /** The Akri handler name this one stands in for. */
  public static final String DEBUG_ECHO = "debugEcho";

  private final SimulatedSettings.Defaults defaults;

  /** The handler as the agent loads it: the process environment and Akri's availability file. */
  public SimulatedHandler() {
    this(SimulatedSettings.Defaults.system());
  }

  /**
   * A handler reading {@code DEBUG_ECHO_INSTANCES_SHARED} and the default file from {@code
   * defaults}.
   */
  SimulatedHandler(SimulatedSettings.Defaults defaults) {
    this.defaults = defaults;
  }

  @Override
  public String name() {
    return NAME;
  }

  @Override
  public Set<String> aliases() {
    return Set.of(DEBUG_ECHO);
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return SimulatedSettings.parse(context.discoveryDetails(), defaults).validation();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    SimulatedSettings settings =
        SimulatedSettings.parse(context.discoveryDetails(), defaults).orThrow();
    String nodeName = context.nodeName();
    if (settings.availability().isPresent()) {
      return AvailabilityDiscovery.start(
          context.scheduler(),
          settings.availability().get(),
          () -> settings.devices(nodeName),
          listener);
    }
    return FixedSnapshotDiscovery.start(
        context.scheduler(), () -> settings.devices(nodeName), listener);
  }
}
