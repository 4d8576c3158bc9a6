package io.jakri.handler.coap;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.util.Objects;
import java.util.function.BiFunction;
import org.pf4j.Extension;

/**
 * The {@code coap} discovery handler: CoAP endpoints found by {@code GET /.well-known/core} (see
 * {@link CoapDetails} for the details, {@link CoapDevices} for the devices, {@link CoapDiscovery}
 * for the rounds). Stateless and thread-safe.
 */
@Extension
public final class CoapHandler implements DiscoveryHandler {

  private final BiFunction<DiscoveryContext, CoapDetails, Prober> probers;

  /** The handler as PF4J creates it: UDP on the host's interfaces. */
  public CoapHandler() {
    this((context, details) -> UdpProber.of(context.scheduler(), details));
  }

  CoapHandler(BiFunction<DiscoveryContext, CoapDetails, Prober> probers) {
    this.probers = Objects.requireNonNull(probers, "probers");
  }

  @Override
  public String name() {
    return "coap";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return CoapDetails.parse(context.discoveryDetails()).validation();
  }

  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    CoapDetails details = CoapDetails.parse(context.discoveryDetails()).orThrow();
    CoapDiscovery discovery =
        new CoapDiscovery(
            context.configurationName(),
            details,
            listener,
            context.scheduler(),
            probers.apply(context, details),
            System::nanoTime);
    discovery.start();
    return discovery;
  }
}
