package io.jakri.agent.discovery;

import io.jakri.handler.DiscoveryHandler;
import java.util.Optional;
import java.util.Set;

/** The discovery handlers installed now, by name and alias. Thread-safe. */
public interface HandlerRegistry {

  Optional<DiscoveryHandler> find(String name);

  /** Every name and alias known now. */
  Set<String> names();

  /** Runs {@code onChange} (on any thread) whenever handlers are added or removed. */
  void addListener(Runnable onChange);
}
