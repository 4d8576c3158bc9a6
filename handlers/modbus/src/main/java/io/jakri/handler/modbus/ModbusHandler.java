package io.jakri.handler.modbus;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.util.Objects;
import java.util.function.Function;
import org.pf4j.Extension;

/**
 * The {@code modbus} discovery handler: Modbus TCP devices at operator-listed addresses, identified
 * by Read Device Identification (see {@link ModbusDetails} for the details, {@link ModbusDevices}
 * for the devices, {@link ModbusDiscovery} for the scans). Stateless and thread-safe; each {@link
 * #start} returns an independent discovery with its own transport.
 */
@Extension
public final class ModbusHandler implements DiscoveryHandler {

  private final Function<DiscoveryContext, ModbusTransport> transports;

  /** The handler as PF4J creates it: non-blocking sockets driven on the context's scheduler. */
  public ModbusHandler() {
    this(context -> new NioTransport(context.scheduler()));
  }

  ModbusHandler(Function<DiscoveryContext, ModbusTransport> transports) {
    this.transports = Objects.requireNonNull(transports, "transports");
  }

  @Override
  public String name() {
    return "modbus";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return ModbusDetails.parse(context.discoveryDetails()).validation();
  }

  /** Parses the details and schedules the first scan; returns at once. */
  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    ModbusDetails details = ModbusDetails.parse(context.discoveryDetails()).orThrow();
    ModbusDiscovery discovery =
        new ModbusDiscovery(
            context.configurationName(),
            details,
            listener,
            context.scheduler(),
            transports.apply(context),
            System::nanoTime);
    discovery.start();
    return discovery;
  }
}
