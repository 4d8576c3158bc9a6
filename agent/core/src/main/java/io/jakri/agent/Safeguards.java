package io.jakri.agent;

import io.jakri.agent.discovery.HandlerLimits;
import io.jakri.agent.discovery.SlotLimits;
import io.jakri.agent.model.ContainerPaths;
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
 * @param handlerLimits how long a call into a discovery handler may take before its thread is
 *     abandoned, and how many abandoned (stranded) threads a handler may have
 * @param containerPaths the rules a device's mounts and device nodes must meet to reach a
 *     container, with the host path prefixes the operator allows mounts of ({@code
 *     --allow-host-mount-prefix})
 */
public record Safeguards(
    Set<String> classDomains,
    boolean allowReservedBrokerEnv,
    String metricsBindAddress,
    SlotLimits slotLimits,
    HandlerLimits handlerLimits,
    ContainerPaths containerPaths) {

  /** The class domains the bundled examples need. */
  public static final Set<String> DEFAULT_CLASS_DOMAINS = Set.of("example.com");

  /** Every interface, as before the flag existed. */
  public static final String DEFAULT_METRICS_BIND_ADDRESS = "0.0.0.0";

  public Safeguards {
    classDomains = Set.copyOf(new TreeSet<>(classDomains));
  }

  /** With no operator exceptions to the mount rules ({@link ContainerPaths#DEFAULT}). */
  public Safeguards(
      Set<String> classDomains,
      boolean allowReservedBrokerEnv,
      String metricsBindAddress,
      SlotLimits slotLimits,
      HandlerLimits handlerLimits) {
    this(
        classDomains,
        allowReservedBrokerEnv,
        metricsBindAddress,
        slotLimits,
        handlerLimits,
        ContainerPaths.DEFAULT);
  }

  /** With the default {@link HandlerLimits}. */
  public Safeguards(
      Set<String> classDomains,
      boolean allowReservedBrokerEnv,
      String metricsBindAddress,
      SlotLimits slotLimits) {
    this(
        classDomains,
        allowReservedBrokerEnv,
        metricsBindAddress,
        slotLimits,
        HandlerLimits.defaults());
  }

  /** The defaults: example classes only, reserved env refused, metrics on every interface. */
  public static Safeguards defaults() {
    return new Safeguards(
        DEFAULT_CLASS_DOMAINS,
        false,
        DEFAULT_METRICS_BIND_ADDRESS,
        SlotLimits.defaults(),
        HandlerLimits.defaults());
  }

  public Safeguards withClassDomains(Set<String> domains) {
    return new Safeguards(
        domains,
        allowReservedBrokerEnv,
        metricsBindAddress,
        slotLimits,
        handlerLimits,
        containerPaths);
  }

  public Safeguards withAllowReservedBrokerEnv(boolean allow) {
    return new Safeguards(
        classDomains, allow, metricsBindAddress, slotLimits, handlerLimits, containerPaths);
  }

  public Safeguards withMetricsBindAddress(String address) {
    return new Safeguards(
        classDomains, allowReservedBrokerEnv, address, slotLimits, handlerLimits, containerPaths);
  }

  public Safeguards withSlotLimits(SlotLimits limits) {
    return new Safeguards(
        classDomains,
        allowReservedBrokerEnv,
        metricsBindAddress,
        limits,
        handlerLimits,
        containerPaths);
  }

  public Safeguards withHandlerLimits(HandlerLimits limits) {
    return new Safeguards(
        classDomains,
        allowReservedBrokerEnv,
        metricsBindAddress,
        slotLimits,
        limits,
        containerPaths);
  }

  public Safeguards withContainerPaths(ContainerPaths paths) {
    return new Safeguards(
        classDomains, allowReservedBrokerEnv, metricsBindAddress, slotLimits, handlerLimits, paths);
  }
}
