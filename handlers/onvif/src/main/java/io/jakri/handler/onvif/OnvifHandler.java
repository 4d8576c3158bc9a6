package io.jakri.handler.onvif;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.time.Clock;
import java.util.Objects;
import java.util.concurrent.ScheduledExecutorService;
import java.util.function.BiFunction;
import java.util.function.Function;
import org.pf4j.Extension;

/**
 * The {@code onvif} discovery handler: Akri's ONVIF IP-camera discovery (see {@link OnvifDetails}
 * for the details, {@link Credentials} for the credentials, {@link OnvifDevices} for the devices,
 * {@link OnvifDiscovery} for the steps). Stateless and thread-safe; each {@link #start} returns an
 * independent discovery with its own HTTP client.
 */
@Extension
public final class OnvifHandler implements DiscoveryHandler {

  private final BiFunction<DiscoveryContext, OnvifDetails, Prober> probers;
  private final Function<DiscoveryContext, DeviceService> services;

  /** The handler as PF4J creates it: multicast on the host's interfaces, SOAP over HTTP. */
  public OnvifHandler() {
    this(
        (context, details) ->
            new MulticastProber(
                context.scheduler(), details.interfaces(), context.configurationName()),
        new SharedDeviceService());
  }

  OnvifHandler(
      BiFunction<DiscoveryContext, OnvifDetails, Prober> probers,
      Function<DiscoveryContext, DeviceService> services) {
    this.probers = Objects.requireNonNull(probers, "probers");
    this.services = Objects.requireNonNull(services, "services");
  }

  @Override
  public String name() {
    return "onvif";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return OnvifDetails.parse(context.discoveryDetails()).validation();
  }

  /** Parses the details and schedules the first discovery round; returns at once. */
  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    OnvifDetails details = OnvifDetails.parse(context.discoveryDetails()).orThrow();
    OnvifDiscovery discovery =
        new OnvifDiscovery(
            context.configurationName(),
            details,
            Credentials.from(context.discoveryProperties()),
            listener,
            context.scheduler(),
            probers.apply(context, details),
            services.apply(context));
    discovery.start();
    return discovery;
  }

  /**
   * One {@link SoapDeviceService} per handler scheduler: the JDK's HTTP client starts a selector
   * thread that lives until the client is garbage-collected, so a client per Configuration would be
   * a thread per Configuration. The scheduler is the handler's own, shared by its Configurations; a
   * new one (a plugin loaded again) gets a new client.
   */
  static final class SharedDeviceService implements Function<DiscoveryContext, DeviceService> {
    private ScheduledExecutorService scheduler;
    private SoapDeviceService service;

    @Override
    public synchronized DeviceService apply(DiscoveryContext context) {
      if (service == null || scheduler != context.scheduler()) {
        scheduler = context.scheduler();
        service = new SoapDeviceService(scheduler, Clock.systemUTC());
      }
      return service;
    }
  }
}
