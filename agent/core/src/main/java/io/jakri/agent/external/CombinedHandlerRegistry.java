package io.jakri.agent.external;

import io.jakri.agent.discovery.HandlerRegistry;
import io.jakri.handler.DiscoveryHandler;
import java.util.HashSet;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The plugin jars' handlers and the registered external handlers as one registry.
 *
 * <p>The rule when both provide a name: <b>the registered external handler serves it</b> for as
 * long as it has an endpoint registered; the plugin serves it again once the last endpoint is
 * dropped. Registering is a deliberate act of the node's operator (only the agent's user may use
 * the registration socket), whereas plugins are bundled, so deploying e.g. Akri's own udev handler
 * pods replaces jakri's udev plugin on that node. Each switch restarts the Configurations using the
 * name (their devices stay, briefly unhealthy) and is logged.
 */
public final class CombinedHandlerRegistry implements HandlerRegistry {

  private static final Logger LOG = LoggerFactory.getLogger(CombinedHandlerRegistry.class);

  private final HandlerRegistry plugins;
  private final HandlerRegistry external;
  private final Set<String> shadowed = new HashSet<>();

  public CombinedHandlerRegistry(HandlerRegistry plugins, HandlerRegistry external) {
    this.plugins = plugins;
    this.external = external;
    addListener(this::logShadowed);
  }

  @Override
  public Optional<DiscoveryHandler> find(String name) {
    return external.find(name).or(() -> plugins.find(name));
  }

  @Override
  public Set<String> names() {
    Set<String> names = new TreeSet<>(plugins.names());
    names.addAll(external.names());
    return names;
  }

  @Override
  public void addListener(Runnable onChange) {
    plugins.addListener(onChange);
    external.addListener(onChange);
  }

  private synchronized void logShadowed() {
    Set<String> both = new TreeSet<>(plugins.names());
    both.retainAll(external.names());
    for (String name : both) {
      if (shadowed.add(name)) {
        LOG.info(
            "handler name {}: the registered external handler serves it instead of the plugin"
                + " while it is registered",
            name);
      }
    }
    for (String name : new TreeSet<>(shadowed)) {
      if (!both.contains(name)) {
        shadowed.remove(name);
        if (plugins.find(name).isPresent()) {
          LOG.info(
              "handler name {}: no external handler registered any more; the plugin serves it",
              name);
        }
      }
    }
  }
}
