package io.jakri.handler.opcua;

import io.jakri.handler.DeviceListener;
import io.jakri.handler.Discovery;
import io.jakri.handler.DiscoveryContext;
import io.jakri.handler.DiscoveryHandler;
import io.jakri.handler.InvalidDetailsException;
import io.jakri.handler.Validation;
import java.time.Duration;
import java.util.Objects;
import java.util.function.BiFunction;
import org.pf4j.Extension;

/**
 * The {@code opcua} discovery handler: Akri's OPC UA discovery. Every discovery URL of the details
 * is asked FindServers (OPC UA Part 4) on an interval; each application of type Server that passes
 * the name filter becomes a shared device whose id and {@value
 * OpcuaDiscovery#DISCOVERY_URL_PROPERTY} property are its discovery URL (see {@link OpcuaDetails},
 * {@link ServerSelection}, {@link OpcuaDiscovery}).
 *
 * <p>Thread-safe. Its state is what all its discoveries share: the {@link MiloTransport} (one I/O
 * thread and one timer thread, only while at least one discovery runs) and the {@link RequestSlots}
 * that bound their requests in flight together to {@value #MAX_REQUESTS}.
 */
@Extension
public final class OpcuaHandler implements DiscoveryHandler {

  /** How long a TCP connection (and OPC UA's Hello/Acknowledge) may take. */
  static final Duration CONNECT_TIMEOUT = Duration.ofSeconds(3);

  /** How long OpenSecureChannel and FindServers may each take. */
  static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(5);

  /** When a request is given up regardless of the client's own timeouts. */
  static final Duration DEADLINE = CONNECT_TIMEOUT.plus(REQUEST_TIMEOUT).plusSeconds(4);

  /**
   * Most FindServers requests in flight over all the handler's Configurations together (each holds
   * an OPC UA client of about 0.3 MB and a connection while it runs).
   */
  static final int MAX_REQUESTS = 32;

  private final MiloTransport transport = new MiloTransport();
  private final RequestSlots slots = new RequestSlots(MAX_REQUESTS);
  private final BiFunction<DiscoveryContext, MiloTransport.Lease, ServerFinder> finders;
  private final HostResolver resolver;

  /** The handler as PF4J creates it: Milo and the system resolver. */
  public OpcuaHandler() {
    this(
        (context, lease) ->
            new MiloServerFinder(lease, context.scheduler(), CONNECT_TIMEOUT, REQUEST_TIMEOUT),
        HostResolver.system());
  }

  OpcuaHandler(
      BiFunction<DiscoveryContext, MiloTransport.Lease, ServerFinder> finders,
      HostResolver resolver) {
    this.finders = Objects.requireNonNull(finders, "finders");
    this.resolver = Objects.requireNonNull(resolver, "resolver");
  }

  @Override
  public String name() {
    return "opcua";
  }

  @Override
  public Validation validate(DiscoveryContext context) {
    return OpcuaDetails.parse(context.discoveryDetails()).validation();
  }

  /** Parses the details and schedules the first FindServers round; returns at once. */
  @Override
  public Discovery start(DiscoveryContext context, DeviceListener listener)
      throws InvalidDetailsException {
    OpcuaDetails details = OpcuaDetails.parse(context.discoveryDetails()).orThrow();
    MiloTransport.Lease lease = transport.acquire();
    OpcuaDiscovery discovery;
    try {
      discovery =
          new OpcuaDiscovery(
              context.configurationName(),
              details,
              listener,
              context.scheduler(),
              finders.apply(context, lease),
              resolver,
              DEADLINE,
              slots,
              lease::close);
    } catch (RuntimeException e) {
      lease.close();
      throw e;
    }
    discovery.start();
    return discovery;
  }

  /** Request slots in use over all discoveries (for tests). */
  int requestsInFlight() {
    return slots.used();
  }

  /** Whether the shared I/O and timer threads run (for tests). */
  boolean transportActive() {
    return transport.active();
  }
}
