package io.jakri.agent.discovery;

import io.jakri.handler.DiscoveryHandler;
import java.util.Optional;
import java.util.Set;
import java.util.TreeSet;

/**
 * The installed handlers less those the operator switched off on this node ({@code
 * --disable-handlers}): a switched-off name is neither found nor listed, so a Configuration naming
 * it is reported as naming a handler that is not installed.
 */
public final class SwitchedOffHandlers implements HandlerRegistry {

  private final HandlerRegistry installed;
  private final Set<String> off;

  public SwitchedOffHandlers(HandlerRegistry installed, Set<String> off) {
    this.installed = installed;
    this.off = Set.copyOf(off);
  }

  @Override
  public Optional<DiscoveryHandler> find(String name) {
    return off.contains(name) ? Optional.empty() : installed.find(name);
  }

  @Override
  public Set<String> names() {
    Set<String> names = new TreeSet<>(installed.names());
    names.removeAll(off);
    return names;
  }

  @Override
  public void addListener(Runnable onChange) {
    installed.addListener(onChange);
  }
}
