package io.jakri.agent;

import io.jakri.agent.discovery.SlotLimits;
import java.util.Set;
import java.util.TreeSet;

/**
 * What the operator lets Configurations do on this node (flags of the agent, values of the chart).
 *
 * @param classDomains the domains a handler's class resource may be in (exact match: {@code
 *     example.com} allows {@code example.com/widget}, not {@code gpu.example.com/x}); {@code
 *     akri.sh/<configuration>}, the Configuration's own class, is always allowed
 * @param allowReservedBrokerEnv whether {@code brokerProperties} may set env names that change how
 *     programs in the container run ({@code LD_PRELOAD}, {@code PATH}, {@code JAVA_TOOL_OPTIONS},
 *     ...); off: a Configuration setting one is refused
 * @param metricsBindAddress the address {@code --metrics-port} listens on ({@code 0.0.0.0}: every
 *     interface)
 * @param slotLimits the most slots (capacity × devices) per Configuration and in all
 */
public record Safeguards(
    Set<String> classDomains,
    boolean allowReservedBrokerEnv,
    String metricsBindAddress,
    SlotLimits slotLimits) {

  /** The class domains the bundled examples need. */
  public static final Set<String> DEFAULT_CLASS_DOMAINS = Set.of("example.com");

  /** Every interface, as before the flag existed. */
  public static final String DEFAULT_METRICS_BIND_ADDRESS = "0.0.0.0";

  public Safeguards {
    classDomains = Set.copyOf(new TreeSet<>(classDomains));
  }

  /** The defaults: example classes only, reserved env refused, metrics on every interface. */
  public static Safeguards defaults() {
    return new Safeguards(
        DEFAULT_CLASS_DOMAINS, false, DEFAULT_METRICS_BIND_ADDRESS, SlotLimits.defaults());
  }

  public Safeguards withClassDomains(Set<String> domains) {
    return new Safeguards(domains, allowReservedBrokerEnv, metricsBindAddress, slotLimits);
  }

  public Safeguards withAllowReservedBrokerEnv(boolean allow) {
    return new Safeguards(classDomains, allow, metricsBindAddress, slotLimits);
  }

  public Safeguards withMetricsBindAddress(String address) {
    return new Safeguards(classDomains, allowReservedBrokerEnv, address, slotLimits);
  }

  public Safeguards withSlotLimits(SlotLimits limits) {
    return new Safeguards(classDomains, allowReservedBrokerEnv, metricsBindAddress, limits);
  }
}
