package io.jakri.handler.zeroconf;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.util.Locale;
import java.util.Objects;
import java.util.function.Function;
import org.pf4j.Extension;

/**
 * The {@code zeroconf} discovery handler: browses a DNS-SD service type over mDNS with JmDNS and
 * reports every matching service instance as a shared device (see {@link ZeroconfDetails} for the
 * details, {@link ZeroconfProperties} for the properties, {@link ServiceRecord#fullName()} for the
 * id). Stateless and thread-safe; each {@link #start} returns an independent {@link
 * ZeroconfDiscovery}.
 */
@Extension
public final class ZeroconfHandler implements DiscoveryHandler {

  private final Function<DiscoveryContext, Browser.Factory> browsers;
  private final AddressSelector addresses;
  private final int maxServices;

  /** The handler as PF4J creates it: JmDNS on the host's network interfaces. */
  public ZeroconfHandler() {
    this(
        context -> JmdnsBrowser.factory(jmdnsHostName(context), context.scheduler()),
        new NetworkAddresses(),
        ZeroconfDiscovery.MAX_SERVICES);
  }

  ZeroconfHandler(
      Function<DiscoveryContext, Browser.Factory> browsers,
      AddressSelector addresses,
      int maxServices) {
    this.browsers = Objects.requireNonNull(browsers, "browsers");
    this.addresses = Objects.requireNonNull(addresses, "addresses");
    this.maxServices = maxServices;
  }

  @Override
  public String name() {
    return "zeroconf";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return ZeroconfDetails.parse(context.discoveryDetails()).validation();
  }

  /**
   * Parses the details and schedules browsing; returns at once. Snapshots follow as services are
   * resolved or removed; a failure to browse on any address is reported through {@link
   * DeviceListener#failed}.
   */
  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    ZeroconfDetails details = ZeroconfDetails.parse(context.discoveryDetails()).orThrow();
    ZeroconfDiscovery discovery =
        new ZeroconfDiscovery(
            context.configurationName(),
            details,
            listener,
            context.scheduler(),
            browsers.apply(context),
            addresses,
            maxServices);
    discovery.start();
    return discovery;
  }

  /** The host name JmDNS claims for itself: {@code jakri-<node>}, reduced to a DNS label. */
  static String jmdnsHostName(DiscoveryContext context) {
    String label =
        ("jakri-" + context.nodeName()).toLowerCase(Locale.ROOT).replaceAll("[^a-z0-9-]", "-");
    return label.length() > 63 ? label.substring(0, 63) : label;
  }
}
