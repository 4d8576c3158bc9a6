package io.jakri.handler;

import java.util.Set;
import org.pf4j.ExtensionPoint;

/**
 * A discovery handler: finds devices of one kind and reports them to the agent.
 *
 * <p>Implementations are PF4J extensions ({@code @Extension}) packaged in a plugin jar. The agent
 * keeps one instance per plugin and calls it from any thread; implementations must be stateless or
 * thread-safe. All per-Configuration state lives in the {@link Discovery} that {@link #start}
 * returns.
 */
public interface DiscoveryHandler extends ExtensionPoint {

  /** The name Configurations use in {@code spec.discoveryHandler.name}, e.g. {@code simulated}. */
  String name();

  /** Other names this handler answers to (e.g. {@code debugEcho}); empty by default. */
  default Set<String> aliases() {
    return Set.of();
  }

  /**
   * Checks a Configuration's details offline, without starting anything. Never throws for bad
   * input: every problem becomes an error or a warning naming the field.
   */
  Validation validate(DiscoveryContext context);

  /**
   * Starts discovery for one Configuration on this node and returns a handle to stop it.
   *
   * <p>The handler reports <em>full snapshots</em> of the devices it currently sees through {@code
   * listener}, on any thread, as often as they change (event-driven where the protocol allows, else
   * by polling on {@link DiscoveryContext#scheduler()}). It must not start a thread per device.
   * This call must return promptly; slow work belongs on the scheduler.
   *
   * @throws InvalidDetailsException when the details cannot be acted on; the message names the
   *     field
   */
  Discovery start(DiscoveryContext context, DeviceListener listener) throws InvalidDetailsException;
}
